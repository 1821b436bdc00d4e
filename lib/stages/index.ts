import type { Stage } from '../naming';
import type { StageFile } from '../stage-settings';
import { dev } from './dev';
import { prod } from './prod';
import { staging } from './staging';

/** Every stage's reviewed settings (one file each). */
export const STAGE_FILES: Readonly<Record<Stage, StageFile>> = { dev, staging, prod };
