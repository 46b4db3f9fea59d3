const ENTITIES: Record<string, string> = {
	'&': '&amp;',
	'<': '&lt;',
	'>': '&gt;',
	'"': '&quot;',
	"'": '&#39;',
};

/** Text made safe for HTML, in an element or an attribute. */
export function escapeHtml(text: string): string {
	return text.replace(/[&<>"']/g, (character) => ENTITIES[character]);
}
