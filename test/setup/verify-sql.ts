// Every test file runs with the product's SQL renderer checked against drizzle's: each statement
// the suite sends is rendered both ways and must come out equal (core/db/dialect.ts).
import { verifyRendering } from '../../core/db/dialect.ts';

verifyRendering(true);
