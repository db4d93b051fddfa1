// The tables behind campaigns, their contacts, the attempts in flight and the breaker's window.
import type { Migration } from './migrations.js';

export const campaignMigrations: readonly Migration[] = [
  {
    id: 'campaigns-1',
    sql: `CREATE TABLE campaigns (
            id TEXT PRIMARY KEY,
            created_at INTEGER NOT NULL,
            state TEXT NOT NULL,
            ended_at INTEGER,
            next_seq INTEGER NOT NULL DEFAULT 1,
            bucket_tokens REAL,
            bucket_at INTEGER,
            record TEXT NOT NULL
          );
          CREATE INDEX campaigns_created ON campaigns (created_at, id);
          CREATE INDEX campaigns_state ON campaigns (state);
          CREATE TABLE campaign_contacts (
            campaign_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            phone_key TEXT,
            state TEXT NOT NULL,
            due_at INTEGER NOT NULL,
            lease_until INTEGER NOT NULL DEFAULT 0,
            outcome TEXT,
            record TEXT NOT NULL,
            PRIMARY KEY (campaign_id, seq)
          );
          CREATE UNIQUE INDEX campaign_contacts_phone ON campaign_contacts (campaign_id, phone_key);
          CREATE INDEX campaign_contacts_state ON campaign_contacts (campaign_id, state, seq);
          CREATE INDEX campaign_contacts_due ON campaign_contacts (campaign_id, due_at)
            WHERE state IN ('pending', 'retry');
          CREATE TABLE campaign_variables (
            campaign_id TEXT NOT NULL,
            name TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (campaign_id, name)
          );
          CREATE TABLE dial_attempts (
            id TEXT PRIMARY KEY,
            campaign_id TEXT NOT NULL,
            owner TEXT NOT NULL,
            call_sid TEXT,
            record TEXT NOT NULL
          );
          CREATE INDEX dial_attempts_campaign ON dial_attempts (campaign_id);
          CREATE INDEX dial_attempts_call ON dial_attempts (call_sid);
          CREATE TABLE dial_starts (campaign_id TEXT NOT NULL, at INTEGER NOT NULL, id TEXT NOT NULL);
          CREATE INDEX dial_starts_campaign ON dial_starts (campaign_id, at);
          CREATE TABLE dial_results (
            campaign_id TEXT NOT NULL,
            id TEXT NOT NULL,
            at INTEGER NOT NULL,
            failed INTEGER NOT NULL,
            PRIMARY KEY (campaign_id, id)
          );
          CREATE INDEX dial_results_at ON dial_results (campaign_id, at);`,
  },
  {
    // The pace's token bucket gave way to the rule in store/pace.ts, kept as one JSON text.
    id: 'campaigns-2',
    sql: `ALTER TABLE campaigns ADD COLUMN pace TEXT;
          ALTER TABLE campaigns DROP COLUMN bucket_tokens;
          ALTER TABLE campaigns DROP COLUMN bucket_at;`,
  },
];
