import { STAGES } from '../../lib/naming';
import { synthesize } from './synth';

/**
 * CloudFormation refuses a template of more than 500 resources, and every route adds eleven (its
 * function, role, policy, log group, integration, route, permission and four alarms). The alarms and
 * the dashboard live in a nested stack of their own (lib/checkout-stack.ts) so that each template
 * keeps room for new routes: a route that would push either over is caught here, not by a deploy.
 */
const LIMIT = 500;
/** Room kept for the next few routes (seven resources each in the stack, four in the monitoring). */
const HEADROOM = 50;

describe.each(STAGES)('the %s templates', (stage) => {
  const count = (t: { toJSON(): unknown }) => Object.keys((t.toJSON() as { Resources: object }).Resources).length;

  it(`the stack stays ${HEADROOM} resources under CloudFormation's ${LIMIT}`, () => {
    expect(count(synthesize(stage).template)).toBeLessThanOrEqual(LIMIT - HEADROOM);
  });

  it(`the monitoring's nested stack stays ${HEADROOM} resources under ${LIMIT}, and holds every alarm of the routes and functions`, () => {
    const s = synthesize(stage);
    expect(count(s.monitoring)).toBeLessThanOrEqual(LIMIT - HEADROOM);
    // The callbacks' and the receipts' alarms are made there too (lib/constructs/callback-delivery.ts, receipt-mail.ts).
    expect(Object.keys(s.monitoring.findResources('AWS::CloudWatch::Alarm')).length).toBe(
      s.stack.monitoring.alarms.length + (s.stack.callbackDelivery?.alarms.length ?? 0) + (s.stack.receiptMail?.alarms.length ?? 0),
    );
    expect(Object.keys(s.template.findResources('AWS::CloudWatch::Alarm'))).toEqual([]);
    expect(Object.keys(s.template.findResources('AWS::CloudFormation::Stack'))).toHaveLength(1);
  });
});
