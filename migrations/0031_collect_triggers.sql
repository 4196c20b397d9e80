-- Collect throughput (issue 20 item 3): claimed; trigger changes follow.
SELECT 1;
