-- Planner statistics for the tables that measurement grows. Autovacuum may
-- be off, or lag behind a burst of ingest; the planner then plans reads of
-- millions of rows from statistics of a few thousand (a nested loop over
-- exposed and converted users instead of a hash join). The server calls
-- this every minute and it analyzes each table that changed by more than
-- autovacuum's own default threshold (50 rows plus 10 % of the table)
-- since its statistics were last gathered, or that never had any. One
-- instance at a time: the others find the lock taken and skip their turn.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION measurement_refresh_statistics() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    t text;
BEGIN
    IF NOT pg_try_advisory_xact_lock(8117240063094512303) THEN
        RETURN;
    END IF;
    FOR t IN
        SELECT s.relname FROM pg_stat_user_tables s
        WHERE s.schemaname = current_schema()
          AND s.relname = ANY (ARRAY[
              'impressions', 'impression_summaries', 'goal_events', 'goal_event_keys', 'goal_event_users',
              'impression_daily', 'impression_exposures', 'impression_flag_users', 'impression_users',
              'impression_value_users', 'impression_variant_users', 'evaluation_hours', 'measure_flags',
              'measure_values', 'rollup_pending', 'release_users', 'release_user_metrics', 'release_arm_metrics'])
          AND s.n_mod_since_analyze > 50 + 0.1 * s.n_live_tup
        ORDER BY s.relname
    LOOP
        EXECUTE format('ANALYZE %I', t);
        RETURN NEXT t;
    END LOOP;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION measurement_refresh_statistics();
