import type { Store } from '../store/store.ts';
import type { Effects } from './effects.ts';

/**
 * What an event's becoming Raised does to jobs (EventWait jobs move on, AutoSubmit definitions are submitted).
 * SKELETON: filled in by the engine work of issue 4.
 */
export async function onEventRaised(_tx: Store, _definition: string, _now: number, _fx: Effects): Promise<void> {}
