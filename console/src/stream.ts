// The live event stream (GET /stream-run-events), followed through the client: it reads the
// stream with fetch (an EventSource cannot send the Authorization header, and the key goes into
// no URL or cookie), reconnects by itself after a drop and resumes after the last event it saw
// (Last-Event-ID), so nothing is missed or seen twice. Here it is opened for a screen and closed
// with it, and each change of state is told while the screen still shows.
import type { OperationParams, RunEvent, WorkflowRunClient } from 'workflow-run-client';

export interface StreamCallbacks {
  onEvent(event: RunEvent): void;
  /** Connected (true: the service placed the stream) or waiting to reconnect (false). */
  onState?(connected: boolean): void;
  /** The service refused the stream (a 4xx: the key revoked, say); it is not tried again. */
  onEnd?(error: unknown): void;
}

/** Where a screen's stream is: `ended` when the service refused it (a 4xx), not tried again. */
export interface StreamStatusValue {
  state: 'connecting' | 'live' | 'reconnecting' | 'ended';
  error?: unknown;
}

/** Opens the stream; the function returned closes it, and nothing is told after. */
export function openStream(
  api: WorkflowRunClient,
  query: OperationParams['streamRunEvents'],
  callbacks: StreamCallbacks,
): () => void {
  const controller = new AbortController();
  const open = () => !controller.signal.aborted;
  void (async () => {
    try {
      const events = api.streamRunEvents(query, {
        signal: controller.signal,
        onConnectionChange: (connected) => open() && callbacks.onState?.(connected),
      });
      for await (const event of events) {
        if (!open()) return;
        callbacks.onEvent(event);
      }
    } catch (error) {
      if (open()) callbacks.onEnd?.(error);
    }
  })();
  return () => controller.abort();
}
