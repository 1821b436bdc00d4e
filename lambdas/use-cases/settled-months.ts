import type { MonthTally } from '../domain/dispute-rates';
import { inParallel } from '../domain/parallel';
import { daysOfMonth, monthTallyOf, NOTHING_SETTLED, sameFigure, withPayments, type DayFigure } from '../domain/settled-days';
import type { Clock } from '../ports/clock';
import type { SettledDays } from '../ports/disputes';
import type { PaymentStore } from '../ports/payments';

/** What counting a merchant's settled payments reads: its payments by day and by id, and the days kept. */
export interface SettledMonthDeps {
  readonly store: Pick<PaymentStore, 'paymentsOfDay' | 'findPayments'>;
  readonly settledDays: SettledDays;
  readonly clock: Clock;
}

/** How long a reading may go on starting reads: epoch milliseconds of real time, as a function's deadline is. */
export interface CountBudget {
  readonly stopAt: number;
}

const inBudget = (budget: CountBudget | undefined): boolean => !budget || Date.now() < budget.stopAt;

/** Payments of a day read per page: one batch read of them by key. */
const DAY_PAGE = 100;
/** The most payments that may still settle a kept day names: read again in one batch (findPayments), else the day is counted again whole. */
const MAX_OPEN = 100;
/** Merchants counted at once (each reads its days one after another). */
const MERCHANTS_AT_ONCE = 4;

/**
 * The merchants' months (domain/settled-days.ts): for each, every day of the month so far, a closed
 * day from the figure kept of it (only its payments that might still settle read again, by id), any
 * other day counted from the merchant's payments of the day, read whole through the store (their
 * statuses and transactions are on the payment, not in the index). A closed day counted is kept, so
 * it is read once; today is counted afresh each time. Only the merchants asked for are read: a
 * merchant nobody asks about costs nothing. With a budget, a reading stops starting reads when it
 * runs out and answers the months it did not finish as not complete; the days it kept stay kept.
 */
export async function settledMonths(deps: SettledMonthDeps, month: string, merchantKeys: readonly string[], budget?: CountBudget): Promise<MonthTally[]> {
  const now = deps.clock.now();
  return inParallel([...new Set(merchantKeys)], MERCHANTS_AT_ONCE, (merchantKey) => settledMonth(deps, month, merchantKey, now, budget));
}

async function settledMonth(deps: SettledMonthDeps, month: string, merchantKey: string, now: Date, budget: CountBudget | undefined): Promise<MonthTally> {
  const kept = await deps.settledDays.ofMonth(merchantKey, month);
  const figures: DayFigure[] = [];
  for (const { day, closed } of daysOfMonth(month, now)) {
    const before = closed ? kept.get(day) : undefined;
    const figure = before ? await readAgain(deps, before, now, budget) : await countDay(deps, merchantKey, day, now, budget);
    if (!figure) return monthTallyOf(merchantKey, month, figures, false);
    // A day with more payments that may still settle than one batch is counted again whole next time.
    if (closed && figure.open.length <= MAX_OPEN && !(before && sameFigure(before, figure))) await deps.settledDays.keep(merchantKey, day, figure);
    figures.push(figure);
  }
  return monthTallyOf(merchantKey, month, figures, true);
}

/** A kept day's figure with its open payments read again (none: the figure as kept, nothing read). */
async function readAgain(deps: SettledMonthDeps, kept: DayFigure, now: Date, budget: CountBudget | undefined): Promise<DayFigure | undefined> {
  if (!kept.open.length) return kept;
  if (!inBudget(budget)) return undefined;
  return withPayments({ ...kept, open: [] }, await deps.store.findPayments(kept.open), now);
}

/** A merchant's day counted from its payments, page after page; undefined when the budget ran out first. */
async function countDay(deps: SettledMonthDeps, merchantKey: string, day: string, now: Date, budget: CountBudget | undefined): Promise<DayFigure | undefined> {
  let figure = NOTHING_SETTLED;
  let cursor: string | undefined;
  do {
    if (!inBudget(budget)) return undefined;
    const page = await deps.store.paymentsOfDay({ merchantKey, day, limit: DAY_PAGE, ...(cursor ? { cursor } : {}) });
    figure = withPayments(figure, page.payments, now);
    cursor = page.cursor;
  } while (cursor);
  return figure;
}
