// Feedback sources for protocols that give oracle feedback between turns (Progress-SQL's ODT).
export { odtFeedback, createOdtFeedback, NO_STRUCTURAL_ISSUE_FEEDBACK } from './odtFeedback';
export type { OdtFeedbackOptions, OdtFeedbackSource } from './odtFeedback';
export { createResultJudge } from './judge';
export type { ResultJudge, Judgement, JudgeOptions } from './judge';
