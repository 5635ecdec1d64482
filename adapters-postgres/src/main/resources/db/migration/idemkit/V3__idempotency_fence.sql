-- A claim's fencing token: renew, complete and release act only on the claim whose fence they name, so a
-- request whose claim lapsed and was taken over can neither answer for the key nor remove its new holder.
-- Rows written before this column existed have none; they expire as they are.
ALTER TABLE idempotency_records ADD COLUMN fence text NULL;
