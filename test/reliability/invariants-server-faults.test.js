// @ts-check
'use strict';

const { describeInvariants, describeStopMode } = require('./invariants');

describeInvariants('server errors and non-JSON answers');
describeStopMode();
