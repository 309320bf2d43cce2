// `npm run galera`: a three-node Galera cluster on this machine for trying the service on, as
// the Galera pass starts it (galera-cluster.ts): in the foreground, until Ctrl-C (or SIGTERM),
// which stops every node and removes their data unless a directory was given.
//
//   npm run galera                 # data in a new temporary directory
//   npm run galera -- .local/galera  # data kept there (a new directory: the nodes install it)
import { GaleraCluster, galeraMissing } from './galera-cluster.js';

const missing = galeraMissing();
if (missing) {
  process.stderr.write(
    `cannot start a Galera cluster: ${missing} (bash scripts/ensure-galera.sh)\n`,
  );
  process.exit(1);
}
const dir = process.argv[2];
const cluster = await GaleraCluster.start(dir ? { dir } : {});
process.stdout.write(
  [
    `Galera cluster ${cluster.name} in ${cluster.dir}:`,
    ...cluster.nodes.map(
      (node, i) =>
        `  ${node.name}: ${cluster.url(i)} (pid ${node.pid}, group port ${node.groupPort})`,
    ),
    `DATABASE_URL=${cluster.env.DATABASE_URL} DATABASE_NODES=${cluster.env.DATABASE_NODES}`,
    'Ctrl-C stops it.',
    '',
  ].join('\n'),
);
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void cluster.stop().then(() => process.exit(0));
  });
}
