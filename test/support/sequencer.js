const { default: Sequencer } = require('@jest/test-sequencer');

/**
 * Jest's order (a failed file first, then the longest by the last run's times, then the largest),
 * with the files below ahead of all others. test/cdk/nag.test.ts needs stacks of its own
 * aws-cdk-lib (test/cdk/synth.ts `ownTree`): run first in the CDK run (one process, scripts/test.mjs),
 * the stage shapes it makes are the ones every later CDK file shares, where after another file it
 * made all four again.
 */
const FIRST = [/\/test\/cdk\/nag\.test\.ts$/];
const first = (tests) => [...tests.filter((t) => FIRST.some((p) => p.test(t.path))), ...tests.filter((t) => !FIRST.some((p) => p.test(t.path)))];

module.exports = class CheckoutSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    return Array.isArray(sorted) ? first(sorted) : Promise.resolve(sorted).then(first);
  }
};
