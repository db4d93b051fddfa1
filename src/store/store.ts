// The state port: one contract, an embedded SQLite adapter (default, durable in DATA_DIR) and a
// Redis adapter (REDIS_URL) so several instances share it. Both pass test/store/contract.ts.

export interface Store {
  /**
   * Claims `key` for `ttlMs`. True for the first claim; false while an earlier claim stands.
   * Used for single-use stream tokens.
   */
  claimOnce(key: string, ttlMs: number): Promise<boolean>;

  close(): Promise<void>;
}
