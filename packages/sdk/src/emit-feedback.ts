// @trust-gate/sdk/emit-feedback: the feedback a settlement records (instruction three).

export { Builder, type FeedbackArgs } from './instructions.js';
export type { Feedback } from './settle.js';
