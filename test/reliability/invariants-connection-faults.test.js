// @ts-check
'use strict';

const { describeInvariants } = require('./invariants');

describeInvariants('resets, dropped answers, hangs past the timeout and slow answers');
