/** Text as HTML where GitLab renders Markdown (lib/text/html.ts): escaped, in paragraphs. */
import { escapeHtml, paragraphsHtml } from "../../../../lib/text/html";

it("escapes what HTML would read", () => {
	expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
});

it("makes paragraphs of text between blank lines, line breaks inside them", () => {
	expect(paragraphsHtml("One\ntwo\r\n\r\n  \n<three>")).toBe('<p dir="auto">One<br>two</p>\n<p dir="auto">&lt;three&gt;</p>');
	for (const none of [null, undefined, "", " \n "]) expect(paragraphsHtml(none)).toBe("");
});
