#!/usr/bin/env bash
# One command from a fresh clone to a running service: makes sure MariaDB and Redis are up
# (installing them on Debian/Ubuntu when missing), installs and builds, migrates, seeds a demo
# organization/key/template (once; kept in .local/demo.json), prints how to try it, then runs
# the API and one worker in the foreground (Ctrl-C stops both).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-services.sh
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run --silent build
npm run --silent migrate >/dev/null

mkdir -p .local
demo=.local/demo.json
valid=false
if [ -f "$demo" ]; then
  org=$(node -pe 'JSON.parse(require("fs").readFileSync(process.argv[1])).organization_id' "$demo")
  # Reuse the saved demo key only if its organization is still in this database.
  node --input-type=module -e '
    import { loadConfig } from "./dist/src/config.js";
    import { createDb } from "./dist/src/db.js";
    import { organizationExists } from "./dist/src/organizations.js";
    const db = createDb(loadConfig());
    const ok = await organizationExists(db, process.argv[1]);
    await db.destroy();
    process.exit(ok ? 0 : 1);' "$org" && valid=true
fi
if [ "$valid" != true ]; then
  npm run --silent admin -- seed-demo > "$demo"
fi

port=${PORT:-3000}
base=${BASE_PATH:-}
key=$(node -pe 'JSON.parse(require("fs").readFileSync(process.argv[1])).api_key' "$demo")
template=$(node -pe 'JSON.parse(require("fs").readFileSync(process.argv[1])).template_id' "$demo")
cat <<MSG

  Demo API key:      $key
  Demo template id:  $template

  Try it:
    curl -s -H "Authorization: $key" -H 'Content-Type: application/json' \\
      -d '{"workflow_template_id":"$template","input_fields":{"full_name":"Ada Lovelace"},"user_assignments":{"Personal details":"ada"}}' \\
      http://localhost:$port$base/create-workflow-run
    curl -s -H "Authorization: $key" http://localhost:$port$base/get-workflow-runs

MSG
exec node dist/src/main.js
