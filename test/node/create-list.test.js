// @ts-check
'use strict';

const {
	createListParameters,
	expectEachInputExactlyOnce,
	pairedIndexes,
	runNode,
	useSandbox,
} = require('../support');

const ANN = { profileId: 'prof_00000000000000a1', email: 'ann@customer.test', firstName: 'Ann' };
const BOB = { profileId: 'prof_00000000000000b2', email: 'bob@customer.test' };

const sandbox = useSandbox({ profiles: [ANN, BOB] });

const createRequests = () => sandbox.requestsTo('/list/create');
/** @param {string} listId */
const emailsIn = (listId) =>
	[...(sandbox.state.lists.get(listId)?.profiles.values() ?? [])].map((profile) => profile.email);

describe('Create List', () => {
	test('output: one list per input item, in input order, each { listId } paired to its item', async () => {
		const items = [{ segment: 'a' }, { segment: 'b' }, { segment: 'c' }];
		const result = await runNode(sandbox, {
			parameters: createListParameters({ listName: '=Segment {{ $json.segment }}' }),
			items,
		});

		expect(createRequests().map((request) => request.body)).toEqual(
			['a', 'b', 'c'].map((segment) => ({
				listName: `Segment ${segment}`,
				listDescription: 'Bought twice',
			})),
		);
		const created = [...sandbox.state.lists.values()];
		expect(result.success).toEqual(
			created.map((list, index) => ({
				json: { listId: list.listId },
				pairedItem: { item: index },
			})),
		);
		expect(created.map((list) => list.name)).toEqual(['Segment a', 'Segment b', 'Segment c']);
		expectEachInputExactlyOnce(result, 3);
	});

	test('profile IDs typed with commas are trimmed, empty ones dropped, and the list holds them; none: no profiles field, an empty list', async () => {
		const result = await runNode(sandbox, {
			parameters: createListParameters({ profileIds: '={{ $json.ids }}' }),
			items: [{ ids: ` ${ANN.profileId} ,, ${BOB.profileId}, ` }, { ids: ' , ' }],
		});
		const [some, none] = createRequests().map((request) => request.body);
		expect(some.profiles).toEqual([ANN.profileId, BOB.profileId]);
		expect(none).not.toHaveProperty('profiles');
		const lists = result.success.map((item) => emailsIn(String(item.json.listId)));
		expect(lists).toEqual([[ANN.email, BOB.email], []]);
	});

	test('client-side checks: a blank name, an empty description or IDs that are not text fail only their item, before any request', async () => {
		const result = await runNode(sandbox, {
			parameters: createListParameters({
				listName: '={{ $json.name }}',
				listDescription: '={{ $json.description }}',
				profileIds: '={{ $json.ids }}',
			}),
			items: [
				{ name: '  ', description: 'd' },
				{ name: 'n', description: '' },
				{ name: 'n', description: 'd', ids: [ANN.profileId, 42] },
				{ name: 'n', description: 'd', ids: { id: ANN.profileId } },
				{ name: ' Kept ', description: ' as given ', ids: ANN.profileId },
			],
			onError: 'continueErrorOutput',
		});
		expect(result.errors.map((item) => [pairedIndexes(item)[0], item.json.error])).toEqual([
			[0, 'List Name is required'],
			[1, 'List Description is required'],
			[2, 'Profile IDs must hold only texts, but entry 2 is a number'],
			[3, 'Profile IDs must be text or a list of texts, not an object'],
		]);
		for (const item of result.errors) expect(item.json.details.kind).toBe('invalid_input');
		expect(createRequests().map((request) => request.body)).toEqual([
			{ listName: 'Kept', listDescription: ' as given ', profiles: [ANN.profileId] },
		]);
		expectEachInputExactlyOnce(result, 5);
	});
});
