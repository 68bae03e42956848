// The strict `date`/`date-time` formats are defined once, in libs/contracts. Elysia registers
// loose ones when it loads (only where none is registered yet); registering ours again after
// loading it keeps ours whichever of the two modules loaded first.
import 'elysia';
import { registerStrictFormats } from '@crm/contracts';

export { isCalendarDate, isDate, isDateTime } from '@crm/contracts';

registerStrictFormats();
