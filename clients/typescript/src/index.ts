// The workflow run service's typed client. See README.md.
export { WorkflowRunClient, type Page, type RunEvent } from './client.js';
export { WorkflowRunConnectionError, WorkflowRunError, type ErrorCode } from './errors.js';
export type {
  Actor,
  AuditEntryType,
  DeliveryStatus,
  FieldType,
  RunEventType,
  RunStatus,
  Scope,
  StepStatus,
} from './names.js';
export type { CallOptions, ClientOptions, StreamOptions } from './options.js';
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders } from './webhooks.js';
export {
  OPERATIONS,
  type ListItem,
  type ListOperationId,
  type OperationId,
  type OperationParams,
  type OperationResults,
} from './generated/operations.gen.js';
export type * from './generated/types.gen.js';
