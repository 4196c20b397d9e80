-- The reports read their newest rows index-only: a rep's meetings and closed sales from events'
-- covering indexes (0008), the funnel's cohort from contact_milestones, the deep pages of /contacts,
-- /journeys and /touchpoints from key-only indexes (0011). A row is read from the index alone only
-- once a vacuum has marked its page all-visible, and by default a table of inserts is vacuumed after
-- 1,000 + 20 % of its rows: 200,000 new events at a million, more than a month of a large account.
-- Until then the last 30 days — what every default window reads — are fetched from the heap row by
-- row (3,376 of the 4,777 meetings of the last 30 days in a fresh scale-10 demo on PGlite).
-- After 5,000 new rows whatever the table's size, a vacuum visits only the pages written since the
-- last one. PostgreSQL's autovacuum and the embedded database's maintenance both follow these.
ALTER TABLE events SET (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);
--> statement-breakpoint
ALTER TABLE contact_milestones SET (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);
--> statement-breakpoint
ALTER TABLE touchpoints SET (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);
--> statement-breakpoint
ALTER TABLE contacts SET (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);
--> statement-breakpoint
ALTER TABLE contact_activity SET (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);
