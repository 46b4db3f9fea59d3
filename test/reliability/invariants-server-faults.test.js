// @ts-check
'use strict';

const { describeInvariants } = require('./invariants');

describeInvariants('server errors and non-JSON answers');
