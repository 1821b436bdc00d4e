import { logger } from '../../lambdas/observability/logger';
import { redact, redactText } from '../../lambdas/observability/redact';

/** No card number or CVV ever reaches a log line (STYLE.md, habit 9). */
const PAN = '4111111111111111';
const CVV = '7391';

describe('redactText masks anything shaped like a card number', () => {
  it.each([
    ['digits only', `card ${PAN} declined`, 'card 411111******1111 declined'],
    ['grouped with spaces', 'card 4111 1111 1111 1111 declined', 'card 411111******1111 declined'],
    ['grouped with dashes', '4111-1111-1111-1111', '411111******1111'],
    ['13 digits', '4222222222222', '422222******2222'],
    ['19 digits', '6011000990139424123', '601100******4123'],
    ['inside JSON text', `{"number":"${PAN}"}`, '{"number":"411111******1111"}'],
    ['grouped with dots', 'card 4111.1111.1111.1111 declined', 'card 411111******1111 declined'],
    ['grouped with slashes', '4111/1111/1111/1111', '411111******1111'],
    ['grouped with plus signs (form-encoded spaces)', '4111+1111+1111+1111', '411111******1111'],
    ['percent-encoded slashes', '4111%2F1111%2F1111%2F1111', '411111******1111'],
    ['a security code after "cvc"', 'customer wrote cvc 123 in the note', 'customer wrote cvc [redacted] in the note'],
    ['a security code after "CVV2:"', 'CVV2: 1234', 'CVV2: [redacted]'],
    ['a security code after "security code is"', 'security code is 987', 'security code is [redacted]'],
  ])('%s', (_name, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it.each([
    ['an amount', 'amount 1500.00 USD'],
    ['an order number', 'order-1234567'],
    ['a payment id', '63c781cc-de3d-11eb-a1f1-0242ac130006'],
    ['a 12-digit reference', 'ref 123456789012'],
    ['a date and time', '2026-11-24 00:17:05.123'],
    ['an IPv4 address', '192.168.100.200'],
    ['a version number', 'v1.16.22'],
  ])('leaves %s alone', (_name, text) => {
    expect(redactText(text)).toBe(text);
  });
});

describe('redact cleans structured log attributes', () => {
  it.each(['cvv', 'CVV2', 'cvc', 'cv2', 'security_code', 'securityCode', 'card_cvv', 'pan', 'card_number', 'cardNumber', 'number_on_card', 'password', 'secret'])(
    'drops the value of a "%s" key, whatever it holds',
    (key) => {
      expect(redact({ [key]: CVV, nested: { [key]: { deep: CVV } } })).toEqual({ [key]: '[redacted]', nested: { [key]: '[redacted]' } });
    },
  );

  it('masks card numbers in values under any key, in arrays and nested objects', () => {
    expect(redact({ note: `paid with ${PAN}`, list: [PAN, { x: PAN }] })).toEqual({
      note: 'paid with 411111******1111',
      list: ['411111******1111', { x: '411111******1111' }],
    });
  });

  it('masks a card number sent as a JSON number', () => {
    expect(redact({ value: Number(PAN) })).toEqual({ value: '411111******1111' });
  });

  it('keeps ordinary numbers, booleans and null as they are', () => {
    expect(redact({ amountMinor: 1000, ok: true, none: null, at: 1_732_000_000 })).toEqual({ amountMinor: 1000, ok: true, none: null, at: 1_732_000_000 });
  });

  it('masks card numbers in error messages and stacks', () => {
    const error = new Error(`card ${PAN} refused`);
    const out = redact(error) as { name: string; message: string; stack: string };
    expect(out.name).toBe('Error');
    expect(out.message).toBe('card 411111******1111 refused');
    expect(out.stack).not.toContain(PAN);
  });

  it('stops at a depth limit instead of walking an endless structure', () => {
    let deep: Record<string, unknown> = { pan: PAN };
    for (let i = 0; i < 20; i++) deep = { child: deep };
    expect(JSON.stringify(redact(deep))).toContain('[truncated]');
    expect(JSON.stringify(redact(deep))).not.toContain(PAN);
  });
});

describe('the logger', () => {
  let written: string;
  let restore: () => void;

  beforeEach(() => {
    written = '';
    const capture = (chunk: unknown) => {
      written += String(chunk);
      return true;
    };
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
    logger.setLogLevel('DEBUG');
    restore = () => {
      out.mockRestore();
      err.mockRestore();
    };
  });

  afterEach(() => {
    restore();
    logger.setLogLevel('SILENT');
  });

  it('writes no card number and no CVV, whatever the call carries', () => {
    logger.info(`charging card ${PAN}`, {
      card: { number: PAN, cvv: CVV, expiry: '01/38' },
      form: { card_number: '4111 1111 1111 1111', security_code: CVV },
      raw: `{"pan":"${PAN}","cvv":"${CVV}"}`,
    });
    logger.warn('retry', { attempts: [{ pan: PAN, cvc: CVV }] });
    logger.error('acquirer refused', { error: new Error(`declined ${PAN}`) });

    const lines = written.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(written).not.toContain(PAN);
    expect(written).not.toContain('4111 1111 1111 1111');
    expect(written).not.toContain(`"${CVV}"`);
    const first = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(first).toMatchObject({
      level: 'INFO',
      message: 'charging card 411111******1111',
      card: { number: '411111******1111', cvv: '[redacted]', expiry: '01/38' },
      form: { card_number: '[redacted]', security_code: '[redacted]' },
    });
  });

  it('adds the request id of API Gateway as the correlation id', async () => {
    const { injectLambdaContext } = await import('@aws-lambda-powertools/logger/middleware');
    const middleware = injectLambdaContext(logger, { resetKeys: true, correlationIdPath: 'requestContext.requestId' });
    const request = { event: { requestContext: { requestId: 'req-42' } }, context: {}, response: undefined, error: undefined, internal: {} };
    await middleware.before?.(request as never);
    logger.info('hello');
    await middleware.after?.(request as never);
    expect(JSON.parse(written.trim()) as Record<string, unknown>).toMatchObject({ message: 'hello', correlation_id: 'req-42' });
    expect(written).not.toContain('no search function');
  });
});

describe('a UUID is never taken for a card number', () => {
  it.each([
    '06641812-5678-4649-8de9-a8cb46676fce',
    '12345678-1234-4123-8123-123456789012',
  ])('%s stays whole, alone and in text', (id) => {
    expect(redactText(id)).toBe(id);
    expect(redactText(`request ${id} failed`)).toBe(`request ${id} failed`);
    expect(redact({ correlation_id: id })).toEqual({ correlation_id: id });
  });

  it('a card number beside a UUID is still masked', () => {
    expect(redactText('06641812-5678-4649-8de9-a8cb46676fce paid with 4111 1111 1111 1111')).toBe('06641812-5678-4649-8de9-a8cb46676fce paid with 411111******1111');
    expect(redactText('4111111111111111 06641812-5678-4649-8de9-a8cb46676fce')).toBe('411111******1111 06641812-5678-4649-8de9-a8cb46676fce');
  });
});
