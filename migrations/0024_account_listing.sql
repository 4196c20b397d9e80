-- `ascribe accounts list`: administration reads every account, which forced row-level security hides
-- from a transaction that names no tenant. A transaction of the owner or of the administration role
-- that sets app.account_listing to 'on' (set_config(…, true): gone at commit) reads the accounts
-- table whole; a request's role never gets this policy, whatever it sets.
DO $$
BEGIN
  EXECUTE format(
    'CREATE POLICY account_listing ON accounts FOR SELECT TO %I, ascribe_admin USING (current_setting(''app.account_listing'', true) = ''on'')',
    current_user);
END $$;
