import type { ParameterizedContext } from 'koa';
import type { Principal } from '../auth/key-store.js';

export interface AppState {
  requestId: string;
  principal?: Principal;
  body?: unknown;
}

export type AppContext = ParameterizedContext<AppState>;
