import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { listenerOf } from '../../bench/cpu.js';

/** A node process listening on a port of its own; it prints the port when it listens. */
async function listeningChild(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      "const s=require('node:net').createServer();s.listen(0,'127.0.0.1',()=>console.log(s.address().port))",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, port: Number(chunk.toString().trim()) };
}

// The bench charges MariaDB's and Redis's CPU to the process that serves the port it uses:
// with a second server of the same name on the machine (the machine's own, a replica, an
// instance started for a measurement), a lookup by name measured whichever came first.
describe('bench: the process serving a port', () => {
  let server: Server;
  let child: ChildProcess | undefined;

  before(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    child?.kill();
    await new Promise((resolve) => server.close(resolve));
  });

  it('is found by the port, among processes of the same name', async () => {
    const started = await listeningChild();
    child = started.child;
    // Two node processes listen: this one and the child. Each port names its own. (The name is
    // the kernel's: `node` on Node 20, `MainThread` on Node 24, which names its main thread.)
    const commOf = (pid: number) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    expect(commOf(child.pid!)).to.equal(commOf(process.pid));
    expect(listenerOf(started.port)).to.deep.equal({ pid: child.pid, comm: commOf(child.pid!) });
    expect(listenerOf((server.address() as AddressInfo).port)).to.deep.equal({
      pid: process.pid,
      comm: commOf(process.pid),
    });
  });

  it('is none when nothing listens on the port', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    expect(listenerOf(port)).to.equal(undefined);
  });
});
