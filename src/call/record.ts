// The call's record, as the call core names it; the shape lives with the store that keeps it.
export type {
  CallRecord,
  CallRecordPage,
  CallRecordQuery,
  FunctionCallRecord,
  TurnRecord,
} from '../store/call-record.js';
