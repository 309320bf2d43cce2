// The pure parts of webhooks: where a webhook may go, the retry schedule, signatures a third
// party's verifier accepts, and the run summary folded from a history.
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import type { RunEvent } from '../../src/runs/run-events.js';
import { deliveryBody, summaryAfter } from '../../src/webhooks/payload.js';
import { retryDelayMs } from '../../src/webhooks/retry-schedule.js';
import { newSecret, signDelivery } from '../../src/webhooks/signing.js';
import { checkEndpointUrl, isInternalAddress } from '../../src/webhooks/url-policy.js';

describe('webhook URL policy', () => {
  const strict = { allowHttp: false, allowPrivate: false };

  it('knows loopback, private, link-local, metadata and mapped addresses', () => {
    for (const inside of [
      '127.0.0.1',
      '127.9.9.9',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::10.0.0.1',
    ]) {
      expect(isInternalAddress(inside), inside).to.equal(true);
    }
    for (const outside of [
      '8.8.8.8',
      '172.32.0.1',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
    ]) {
      expect(isInternalAddress(outside), outside).to.equal(false);
    }
  });

  it('refuses http, credentials and literal internal hosts unless the operator allows them', () => {
    expect(checkEndpointUrl('https://hooks.example.com/x?a=1', strict)).to.equal(
      'https://hooks.example.com/x?a=1',
    );
    for (const [url, reason] of [
      ['http://hooks.example.com/x', /https/],
      ['ftp://hooks.example.com/x', /https/],
      ['https://user:pw@hooks.example.com/', /credentials/],
      ['https://localhost/x', /local host/],
      ['https://app.localhost/x', /local host/],
      ['https://127.0.0.1/x', /internal address/],
      ['https://[::1]/x', /internal address/],
      ['https://[::ffff:127.0.0.1]/x', /internal address/],
      ['https://10.0.0.5:8443/x', /internal address/],
      ['https://169.254.169.254/latest/meta-data', /internal address/],
      ['https://2130706433/x', /internal address/], // 127.0.0.1 written as one number
      ['not a url', /valid/],
      ['https://hooks.example.com/#frag', /fragment/],
    ] as const) {
      expect(() => checkEndpointUrl(url, strict), url).to.throw(reason);
    }
    expect(
      checkEndpointUrl('http://127.0.0.1:9/x', { allowHttp: true, allowPrivate: true }),
    ).to.equal('http://127.0.0.1:9/x');
    expect(() =>
      checkEndpointUrl('http://127.0.0.1:9/x', { allowHttp: true, allowPrivate: false }),
    ).to.throw(/internal/);
  });
});

describe('webhook retry schedule', () => {
  it('grows 3× per failure from the base, capped, within ±25%, over about a day by default', () => {
    const plain = (n: number) => retryDelayMs(n, 5000, () => 0.5);
    expect([1, 2, 3, 4].map(plain)).to.deep.equal([5000, 15000, 45000, 135000]);
    expect(plain(30)).to.equal(5000 * 4320);
    expect(retryDelayMs(2, 5000, () => 0)).to.equal(11250);
    expect(retryDelayMs(2, 5000, () => 1)).to.equal(18750);
    // 12 attempts: 11 waits between them.
    const total = Array.from({ length: 11 }, (_, i) => plain(i + 1)).reduce((a, b) => a + b, 0);
    expect(total / 3600_000).to.be.within(20, 26);
  });
});

describe('webhook signatures', () => {
  it('are Standard Webhooks signatures: the standardwebhooks verifier accepts them', () => {
    const secret = newSecret();
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ type: 'run.created', data: { runId: 'r' } });
    const headers = signDelivery([secret], 'evt_1', new Date(), body);
    expect(headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, { ...headers })).to.deep.equal(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, { ...headers })).to.throw();
    expect(() => new Webhook(secret).verify(body + ' ', { ...headers })).to.throw();
  });

  it('are byte for byte the signatures standardwebhooks makes, for any body and time', () => {
    const bodies = [
      '',
      '{"a":1}',
      JSON.stringify({ name: 'Zoë ✓ 日本 🎉', note: 'a.b.c\n"quoted"' }),
      'x'.repeat(100_000),
    ];
    for (const body of bodies) {
      for (const ms of [0, 999, 1_764_000_000_123, Date.now()]) {
        const secret = newSecret();
        const at = new Date(ms);
        const headers = signDelivery([secret], `evt_${ms}`, at, body);
        expect(headers['webhook-signature']).to.equal(
          new Webhook(secret).sign(`evt_${ms}`, at, body),
        );
        expect(headers['webhook-timestamp']).to.equal(String(Math.floor(ms / 1000)));
      }
    }
  });

  it('carry one signature per secret during a rotation: either secret verifies', () => {
    const [old, fresh] = [newSecret(), newSecret()];
    const body = '{"type":"run.started"}';
    const headers = signDelivery([fresh, old], 'evt_2', new Date(), body);
    expect(headers['webhook-signature'].split(' ')).to.have.length(2);
    for (const secret of [old, fresh]) new Webhook(secret).verify(body, { ...headers });
  });
});

describe('webhook payload', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 12, 0, s)).toISOString();
  const history: RunEvent[] = [
    {
      seq: 1,
      type: 'run.created',
      at: at(0),
      data: { templateId: 't', workflowName: 'Onboarding' },
    },
    {
      seq: 2,
      type: 'run.started',
      at: at(1),
      data: { step: 'A', assignee: 'ada', dueDate: at(99) },
    },
    { seq: 3, type: 'step.overdue', at: at(2), data: { step: 'A', dueDate: at(99) } },
    {
      seq: 4,
      type: 'step.completed',
      at: at(3),
      data: { step: 'A', inputFields: {}, nextStep: 'B' },
    },
    { seq: 5, type: 'run.failed', at: at(4), data: { error: 'x', step: 'B' } },
    { seq: 6, type: 'run.retried', at: at(5), data: { change: 'completeStep', step: 'B' } },
    { seq: 7, type: 'step.completed', at: at(6), data: { step: 'B', inputFields: {} } },
    { seq: 8, type: 'run.completed', at: at(6), data: {} },
  ];
  const after = (n: number) => summaryAfter('r1', history.slice(0, n));

  it('folds the summary of the run after each event from its history', () => {
    expect(after(1)).to.deep.equal({
      id: 'r1',
      lastActivity: at(0),
      workflowName: 'Onboarding',
      status: 'pending',
    });
    const started = {
      id: 'r1',
      lastActivity: at(1),
      workflowName: 'Onboarding',
      status: 'active',
      currentStepName: 'A',
      currentStepAssignee: 'ada',
      currentStepDueDate: at(99),
    };
    expect(after(2)).to.deep.equal(started);
    expect(after(3), 'being overdue is not activity').to.deep.equal(started);
    expect(after(4)).to.deep.equal({
      id: 'r1',
      lastActivity: at(3),
      workflowName: 'Onboarding',
      status: 'active',
      currentStepName: 'B',
    });
    expect(after(5)).to.include({ status: 'failed', currentStepName: 'B', lastActivity: at(4) });
    expect(after(6)).to.include({ status: 'active', currentStepName: 'B', lastActivity: at(5) });
    expect(after(8)).to.deep.equal({
      id: 'r1',
      lastActivity: at(6),
      workflowName: 'Onboarding',
      status: 'completed',
    });
    expect(summaryAfter('r1', history.slice(1)), 'a history without its start').to.equal(undefined);
  });

  it('puts the event’s data, the run, the organization and the summary in the body', () => {
    const body = JSON.parse(
      deliveryBody(history[1]!, { id: 'r1', organizationId: 'o1', summary: after(2)! }),
    );
    expect(body).to.deep.equal({
      type: 'run.started',
      timestamp: at(1),
      data: {
        step: 'A',
        assignee: 'ada',
        dueDate: at(99),
        runId: 'r1',
        organizationId: 'o1',
        seq: 2,
        run: after(2),
      },
    });
  });
});
