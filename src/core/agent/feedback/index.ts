// Feedback sources for protocols that give oracle feedback between turns (Progress-SQL's ODT).
export { odtFeedback, createOdtFeedback, NO_STRUCTURAL_ISSUE_FEEDBACK } from './odtFeedback';
export { createResultJudge } from './judge';
