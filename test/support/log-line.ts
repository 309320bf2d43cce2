// A process that logs one JSON line, as the service's processes do, after an optional delay,
// then stays until it is stopped: for the bench's process fixtures (bench-processes.test.ts).
const [msg = 'started', delayMs = '0'] = process.argv.slice(2);
setTimeout(() => console.log(JSON.stringify({ level: 'info', msg })), Number(delayMs));
setInterval(() => undefined, 60_000);
process.on('SIGTERM', () => process.exit(0));
