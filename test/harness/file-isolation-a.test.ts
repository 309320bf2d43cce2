// One of two files that check, each against what the other left, that the harness gives every
// test file a database and a queue prefix of its own (see test/support/isolation-probe.ts).
import { probeIsolation } from '../support/isolation-probe.js';

probeIsolation();
