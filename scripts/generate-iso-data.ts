import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderIsoData } from './iso-data';

const target = resolve(__dirname, '../lambdas/domain/generated/iso-data.ts');
const text = renderIsoData();
if (process.argv.includes('--check')) {
  if (readFileSync(target, 'utf8') !== text) {
    console.error('lambdas/domain/generated/iso-data.ts is out of date: run npm run data:iso');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
  console.log('Wrote lambdas/domain/generated/iso-data.ts.');
}
