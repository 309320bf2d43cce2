// The committed client (clients/typescript: openapi.json, src/generated/) is what the API
// document generates today: a route whose contract changed without `npm run client:generate`
// fails here. The generator needs Node >= 22.18, so on an older Node (CI's Node 20 pass) this
// check is left to the Node 24 pass.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);

describe('the generated client', () => {
  it('matches what the API document generates', function () {
    if (major < 22 || (major === 22 && minor < 18)) {
      this.skip(); // the generator's engines: see above
    }
    this.timeout(60000);
    return new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        ['scripts/generate-client.mjs', '--check'],
        { cwd: root },
        (error, stdout, stderr) => {
          try {
            expect(error, `${stdout}${stderr}`).to.equal(null);
            expect(stdout).to.match(/matches the API document/);
            resolve();
          } catch (failure) {
            reject(failure as Error);
          }
        },
      );
    });
  });
});
