/*!
 * sanitize-lite 0.4.2 (vendored, patched: allow <mark>)
 * Copyright (c) 2019 Jo Park. MIT License.
 * Upstream: https://github.com/jopark/sanitize-lite
 */
'use strict';

var DEFAULT_TAGS = ['p', 'br', 'strong', 'em', 'ul', 'ol', 'li', 'a', 'mark'];
var URL_ATTRS = { a: 'href' };

function sanitize(html, options) {
  var allowed = (options && options.allowedTags) || DEFAULT_TAGS;
  var template = document.createElement('template');
  // Parsing through a <template> keeps scripts inert while we walk the tree.
  template.innerHTML = html;
  walk(template.content, allowed);
  var out = document.createElement('div');
  out.appendChild(template.content.cloneNode(true));
  return out.innerHTML;
}

function walk(node, allowed) {
  var children = Array.prototype.slice.call(node.childNodes);
  for (var i = 0; i < children.length; i++) {
    var child = children[i];
    if (child.nodeType !== 1) continue;
    var tag = child.nodeName.toLowerCase();
    if (allowed.indexOf(tag) === -1) {
      // replace the element by its text; never copy its innerHTML
      child.replaceWith(document.createTextNode(child.textContent || ''));
      continue;
    }
    stripAttributes(child, tag);
    walk(child, allowed);
  }
}

function stripAttributes(el, tag) {
  var keep = URL_ATTRS[tag];
  for (var i = el.attributes.length - 1; i >= 0; i--) {
    var name = el.attributes[i].name;
    if (name !== keep) el.removeAttribute(name);
    else if (/^\s*javascript:/i.test(el.getAttribute(name))) el.removeAttribute(name);
  }
}

function escape(text) {
  var div = document.createElement('div');
  div.textContent = text;
  return div.innerHTML;
}

module.exports = { sanitize: sanitize, escape: escape };
