-- A hook request's connector in one call (issue 21, webhook throughput): the account of a connector
-- of the given kind and its sealed signing secret, through 0030's probe policy, where it took two
-- transactions (0030's ascribe_connector_account, then the secret read under the account). The
-- secret stays sealed: it opens only with the instance's SECRET_KEYS and is bound to its account
-- and connector (src/crypto/secret-box.ts).
CREATE OR REPLACE FUNCTION ascribe_connector_hook(connector_id uuid, connector_kind text)
  RETURNS TABLE (account_id uuid, secret_sealed text)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = public, pg_temp
  SET app.rule_probe = 'on'
  AS $$ SELECT c.account_id, c.secret_sealed FROM connectors c WHERE c.id = connector_id AND c.kind = connector_kind $$;
