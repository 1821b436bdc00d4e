import { synthesize } from './synth';
test('time', () => {
  const t0 = Date.now();
  synthesize('dev');
  const t1 = Date.now();
  synthesize('prod');
  const t2 = Date.now();
  console.log('first', t1 - t0, 'second', t2 - t1);
});
