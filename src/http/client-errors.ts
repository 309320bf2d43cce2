// Requests Node refuses before the application sees them (headers too large, malformed
// framing, headers or a whole request too slow) get the same JSON {message, code} body as
// everything else, where Node still lets the server answer.
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../logger.js';
import { ERRORS, errorBody, type ErrorBody } from './errors.js';

/** The answer to a parser's refusal, by Node's error code. */
function answerTo(code: string | undefined): ErrorBody {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return errorBody('headers_too_large', 'request headers are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return errorBody('request_timeout', 'the request did not arrive in time');
    default:
      return errorBody('malformed_request', 'malformed HTTP request');
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
    const answer = answerTo(err.code);
    const status = ERRORS[answer.code].status;
    const reason = STATUS_CODES[status] ?? 'Bad Request';
    const body = JSON.stringify(answer);
    log.info('request refused by the HTTP parser', { status, errCode: err.code });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
