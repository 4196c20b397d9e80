-- The P&L's commissions of a window (src/queries/finance-pnl.ts): the commissionable purchases by
-- date with the three columns the commission is worked out from, read from the index alone. At
-- scale 10 the report read every purchase of the account (3,079 of 5,393 in its 90 days) from the
-- table, a quarter of its time once its sales came from the daily rollup.
CREATE INDEX purchases_commission_cover_idx ON purchases (account_id, purchase_date)
  INCLUDE (commission_amount, amount, commission_rate) WHERE commissionable;
