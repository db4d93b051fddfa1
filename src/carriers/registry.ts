// The carriers this server speaks, in order: the first is the default of outbound calls and the one
// a configuration error names when production has none. Adding a carrier is its folder under
// src/carriers/ and one line here (docs/carriers.md); nothing else in the server changes.
import type { Carrier } from './carrier.js';
import { exotelCarrier } from './exotel/carrier.js';
import { plivoCarrier } from './plivo/carrier.js';
import { telnyxCarrier } from './telnyx/carrier.js';
import { twilioCarrier } from './twilio/carrier.js';
import { vonageCarrier } from './vonage/carrier.js';

export const CARRIERS: readonly Carrier[] = Object.freeze([
  twilioCarrier,
  telnyxCarrier,
  plivoCarrier,
  vonageCarrier,
  exotelCarrier,
] as Carrier[]);
