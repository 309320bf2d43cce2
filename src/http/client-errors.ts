// Requests Node refuses before the application sees them (headers too large, malformed
// framing, headers or a whole request too slow) get the same JSON {message, code} body as
// everything else, where Node still lets the server answer.
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../logger.js';

function statusOf(code: string | undefined): number {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

export function answerClientErrors(server: Server, log: Logger): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    // A response already under way (a later pipelined request was malformed) cannot be
    // followed by another; a gone client cannot be answered.
    const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })
      ._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
      socket.destroy();
      return;
    }
    const status = statusOf(err.code);
    const reason = STATUS_CODES[status] ?? 'Bad Request';
    const body = JSON.stringify({
      message:
        status === 431
          ? 'request headers are too large'
          : status === 408
            ? 'the request did not arrive in time'
            : 'malformed HTTP request',
      code: reason.toLowerCase().replace(/[^a-z]+/g, '_'),
    });
    log.info('request refused by the HTTP parser', { status, errCode: err.code });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
