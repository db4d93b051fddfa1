// The carriers the simulated carrier API answers for, one file each.
import { exotelSimApi } from './carriers/exotel.js';
import { telnyxSimApi } from './carriers/telnyx.js';
import { plivoSimApi } from './carriers/plivo.js';
import { twilioSimApi } from './carriers/twilio.js';
import { vonageSimApi } from './carriers/vonage.js';
import type { SimCarrierApi } from './handler.js';

export const SIM_CARRIER_APIS: readonly SimCarrierApi[] = Object.freeze([
  twilioSimApi,
  telnyxSimApi,
  plivoSimApi,
  vonageSimApi,
  exotelSimApi,
]);
