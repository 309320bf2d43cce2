import type { Actor } from '../../src/audit/actor.js';

/** The actor of changes made in unit tests of the state machine and the statements. */
export const TEST_ACTOR: Actor = { type: 'api_key', id: 'key-1', name: 'test key' };
