import { answerAlertReply } from './alerts.ts';
import { cancelTree, killTree } from './chain-closing.ts';
import { createChainJobs } from './chain-creation.ts';
import { resumeOnMarked } from './chain-resume.ts';
import { answerStep, onCallFinal } from './chains.ts';
import { raiseOnFinal } from './events.ts';
import type { Kernel } from './kernel.ts';
import { answerAsking, closeQuestion } from './question-jobs.ts';
import { endRecurrence, submitNextOccurrence } from './recurrences.ts';
import { releaseLocks } from './window-and-lock-gates.ts';

/** What follows from a transition, in the order it happens (docs/architecture.md §6a). */
export function registerReactions(kernel: Kernel): void {
  kernel.on('created', createChainJobs);
  kernel.on('due', submitNextOccurrence);
  kernel.on('final', closeQuestion);
  kernel.on('final', raiseOnFinal);
  kernel.on('final', releaseLocks);
  kernel.on('final', endRecurrence);
  kernel.on('settled', onCallFinal);
  kernel.on('cancelTree', cancelTree);
  kernel.on('killTree', killTree);
  kernel.on('answered', answerStep);
  kernel.on('answered', answerAsking);
  kernel.on('answered', answerAlertReply);
  kernel.on('marked', resumeOnMarked);
}
