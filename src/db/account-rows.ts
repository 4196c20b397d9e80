/**
 * A batch of rows fresh from SQL, each holding the `account_id` it was read for, handed to a
 * streamed answer as they came (http/stream-rows.ts): the tenant barrier compares that column row
 * by row and the redaction's copy leaves it out, one copy per row where `ownedRows` (a tagged copy),
 * the barrier's walk and the redaction's copy made three. Tens of thousands of rows a request.
 */
export class AccountRows<Row extends { account_id: string } = { account_id: string }> {
  constructor(readonly rows: readonly Row[]) {}
}
