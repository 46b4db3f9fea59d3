// Sources without a __schema__ file: what their code hands over, read by hand in n8n-nodes-base
// (the file named beside each). Where the code passes a webhook's body through, the body's shape
// is the vendor's published webhook payload. Keys only, as in a __schema__ file: a string value
// is 's', a list holds its entries' shape, `primary: true` marks a list's primary entry.

const s = 's';

export const FROM_CODE = [
	{
		source: 'Facebook Lead Ads Trigger (simplified)',
		file: 'nodes/FacebookLeadAds/FacebookLeadAdsTrigger.node.js',
		how: 'webhook(): { id, data: field_data by name, form, ad, adset, page }',
		shape: {
			id: s,
			data: { email: s, first_name: s, last_name: s, full_name: s },
			form: { id: s, name: s },
			created_time: s,
		},
	},
	{
		source: 'Calendly Trigger (invitee.created)',
		file: 'nodes/Calendly/v2/CalendlyTriggerV2.node.js',
		how: "webhook(): the body as sent, Calendly's { event, payload: invitee }",
		shape: {
			event: s,
			payload: {
				email: s,
				first_name: s,
				last_name: s,
				name: s,
				scheduled_event: {
					name: s,
					event_memberships: [{ user: s, user_email: s, user_name: s }],
					event_guests: [{ email: s }],
				},
			},
		},
	},
	{
		source: 'Cal.com Trigger (BOOKING_CREATED)',
		file: 'nodes/Cal/v2/CalTriggerV2.node.js',
		how: "webhook(): { triggerEvent, createdAt, ...payload }: the booking's organizer and attendees",
		shape: {
			triggerEvent: s,
			title: s,
			organizer: { email: s, name: s },
			attendees: [{ email: s, name: s }],
		},
	},
	{
		source: 'Acuity Scheduling Trigger (resolve data)',
		file: 'nodes/AcuityScheduling/AcuitySchedulingTrigger.node.js',
		how: 'webhook(): with Resolve Data, the appointment GET /appointments/{id}',
		shape: { id: s, firstName: s, lastName: s, email: s, phone: s, calendar: s, type: s },
	},
	{
		source: 'ConvertKit Trigger (subscriber events)',
		file: 'nodes/ConvertKit/ConvertKitTrigger.node.js',
		how: "webhook(): the body as sent, Kit's { subscriber }",
		shape: { subscriber: { id: s, first_name: s, email_address: s, state: s, fields: {} } },
	},
	{
		source: 'Mailchimp Trigger (subscribe)',
		file: 'nodes/Mailchimp/MailchimpTrigger.node.js',
		how: "webhook(): req.body, Mailchimp's form-encoded { type, data: { email, merges } }",
		shape: {
			type: s,
			fired_at: s,
			data: {
				id: s,
				email: s,
				email_type: s,
				list_id: s,
				merges: { EMAIL: s, FNAME: s, LNAME: s },
			},
		},
	},
	{
		source: 'MailerLite Trigger (subscriber.created)',
		file: 'nodes/MailerLite/v2/MailerLiteTriggerV2.node.js',
		how: "webhook(): body.fields, MailerLite's subscriber",
		shape: { id: s, email: s, status: s, fields: { name: s, last_name: s } },
	},
	{
		source: 'ActiveCampaign Trigger (subscribe)',
		file: 'nodes/ActiveCampaign/ActiveCampaignTrigger.node.js',
		how: "webhook(): req.body, ActiveCampaign's form-encoded { type, contact }",
		shape: { type: s, date_time: s, contact: { id: s, email: s, first_name: s, last_name: s } },
	},
	{
		source: 'Mautic Trigger (contact identified)',
		file: 'nodes/Mautic/MauticTrigger.node.js',
		how: "webhook(): req.body, Mautic's { 'mautic.lead_post_save_new': [{ contact }] }",
		shape: {
			'mautic.lead_post_save_new': [
				{ contact: { id: s, fields: { core: { email: { value: s } } } } },
			],
		},
	},
	{
		source: 'Typeform Trigger (simplified answers)',
		file: 'nodes/Typeform/TypeformTrigger.node.js',
		how: 'webhook(): one key per question title',
		shape: { 'What is your email?': s, 'First name': s },
	},
	{
		source: 'Typeform Trigger (simplified, question titled Email)',
		file: 'nodes/Typeform/TypeformTrigger.node.js',
		how: 'webhook(): one key per question title',
		shape: { Email: s, 'First name': s, 'Last name': s },
	},
	{
		source: 'n8n Form Trigger',
		file: 'nodes/Form/FormTrigger.node.js',
		how: 'addFormResponseDataToReturnItem: one key per field label, plus submittedAt and formMode',
		shape: { Email: s, Name: s, submittedAt: s, formMode: s },
	},
	{
		source: 'n8n Form Trigger (referral form)',
		file: 'nodes/Form/FormTrigger.node.js',
		how: 'addFormResponseDataToReturnItem: one key per field label',
		shape: { 'Your Email': s, "Friend's Email": s, submittedAt: s },
	},
	{
		source: 'Webhook (JSON body)',
		file: 'nodes/Webhook/Webhook.node.js',
		how: 'webhook(): { headers, params, query, body }',
		shape: {
			headers: { host: s },
			params: {},
			query: {},
			body: { email: s, firstName: s, lastName: s },
		},
	},
	{
		source: 'JotForm Trigger (resolve data)',
		file: 'nodes/JotForm/JotFormTrigger.node.js',
		how: 'webhook(): one key per question text, from rawRequest',
		shape: { 'E-mail': s, Name: { first: s, last: s } },
	},
	{
		source: 'Wufoo Trigger',
		file: 'nodes/Wufoo/WufooTrigger.node.js',
		how: 'webhook(): one key per field title, plus entryId, dateCreated',
		shape: { Email: s, Name: s, entryId: s, dateCreated: s },
	},
	{
		source: 'Microsoft Entra ID User Get',
		file: 'nodes/Microsoft/Entra/descriptions/UserDescription.js',
		how: "the user's fields listed by Output: Selected Fields / All",
		shape: {
			id: s,
			displayName: s,
			givenName: s,
			surname: s,
			mail: s,
			otherMails: [s, s],
			userPrincipalName: s,
			proxyAddresses: [s, s],
		},
	},
	{
		source: 'Google Workspace Admin User Get (full)',
		file: 'nodes/Google/GSuiteAdmin/GSuiteAdmin.node.js',
		how: 'the Directory API user: primaryEmail, emails, recoveryEmail, name { givenName, familyName }',
		shape: {
			id: s,
			primaryEmail: s,
			name: { givenName: s, familyName: s, fullName: s },
			emails: [{ address: s, primary: true }, { address: s }],
			recoveryEmail: s,
		},
	},
	{
		source: 'Copper Person Get',
		file: 'nodes/Copper/descriptions/PersonDescription.js',
		how: 'the person: emails, a list of { email, category }',
		shape: {
			id: s,
			name: s,
			first_name: s,
			last_name: s,
			emails: [
				{ email: s, category: s },
				{ email: s, category: s },
			],
		},
	},
	{
		source: 'Intercom Contact (User/Lead) Get',
		file: 'nodes/Intercom/Intercom.node.js',
		how: 'the user or lead as Intercom answers it',
		shape: { type: s, id: s, email: s, name: s, owner_id: s },
	},
	{
		source: 'Zendesk User Get',
		file: 'nodes/Zendesk/UserDescription.js',
		how: 'the user as Zendesk answers it',
		shape: { id: s, email: s, name: s, role: s },
	},
	{
		source: 'Agile CRM Contact Get',
		file: 'nodes/AgileCrm/ContactDescription.js',
		how: 'properties, a list of { type, name, value }',
		shape: { id: s, properties: [{ type: s, name: s, value: s }] },
	},
	{
		source: 'Microsoft Outlook Message Get',
		file: 'nodes/Microsoft/Outlook/v2/actions/message/get.operation.js',
		how: "Graph's message: from, sender, toRecipients, ccRecipients",
		shape: {
			id: s,
			subject: s,
			from: { emailAddress: { address: s, name: s } },
			toRecipients: [{ emailAddress: { address: s, name: s } }],
		},
	},
	{
		source: 'Gumroad Trigger (sale)',
		file: 'nodes/Gumroad/GumroadTrigger.node.js',
		how: "webhook(): req.body, Gumroad's sale ping",
		shape: { sale_id: s, email: s, full_name: s, product_name: s },
	},
	{
		source: 'Stripe Trigger (customer.created)',
		file: 'nodes/Stripe/StripeTrigger.node.js',
		how: 'webhook(): the event as sent, { type, data: { object: customer } }',
		shape: { id: s, type: s, data: { object: { id: s, email: s, name: s } } },
	},
	{
		source: 'Shopify Trigger (customers/create)',
		file: 'nodes/Shopify/ShopifyTrigger.node.js',
		how: 'webhook(): the customer as sent',
		shape: {
			id: s,
			email: s,
			first_name: s,
			last_name: s,
			default_address: { first_name: s, last_name: s },
		},
	},
	{
		source: 'Eventbrite Trigger (attendee, resolve data)',
		file: 'nodes/Eventbrite/EventbriteTrigger.node.js',
		how: 'webhook(): with Resolve Data, the attendee: profile { email, first_name, last_name }',
		shape: { id: s, profile: { email: s, first_name: s, last_name: s, name: s }, event_id: s },
	},
	{
		source: 'Zoom Meeting Registrant',
		file: 'nodes/Zoom/MeetingRegistrantDescription.js',
		how: 'the registrant as Zoom answers it',
		shape: { id: s, email: s, first_name: s, last_name: s, join_url: s },
	},
];
