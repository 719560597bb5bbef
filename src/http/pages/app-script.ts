// The pages' one script (issue 14: "a little progressive JavaScript"). Every page works without it: it
// only adds copy buttons, local times, a confirmation before the irreversible actions and a guard
// against double submission. Served from this host as /assets/app-<hash>.js (CSP script-src 'self').

export const APP_JS = `
'use strict';
(function () {
  // A "Copy" button after each [data-copy] element (the new API key, commands).
  document.querySelectorAll('[data-copy]').forEach(function (el) {
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy';
    button.textContent = 'Copy';
    button.setAttribute('aria-label', 'Copy ' + (el.getAttribute('data-copy') || 'the text'));
    button.addEventListener('click', function () {
      var text = el.textContent.trim();
      var done = function (label) {
        button.textContent = label;
        setTimeout(function () { button.textContent = 'Copy'; }, 2000);
      };
      var selectIt = function () {
        var range = document.createRange();
        range.selectNodeContents(el);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        done('Selected: press Ctrl+C');
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done('Copied'); }, selectIt);
      } else {
        selectIt();
      }
    });
    el.insertAdjacentElement('afterend', button);
  });

  // Times in the reader's own time zone (the server writes UTC).
  document.querySelectorAll('time[datetime]').forEach(function (el) {
    var when = new Date(el.getAttribute('datetime'));
    if (isNaN(when.getTime())) return;
    el.title = el.getAttribute('datetime');
    el.textContent = when.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  });

  // Forms marked data-confirm ask first; every form is sent once (a second click waits for the first).
  document.addEventListener('submit', function (event) {
    var form = event.target;
    var question = form.getAttribute('data-confirm');
    if (question && !window.confirm(question)) {
      event.preventDefault();
      return;
    }
    if (form.dataset.sending) {
      event.preventDefault();
      return;
    }
    form.dataset.sending = '1';
    form.setAttribute('aria-busy', 'true');
  });
  // Back/forward restores a page from the cache with its forms marked as sent: make them usable again.
  window.addEventListener('pageshow', function () {
    document.querySelectorAll('form[data-sending]').forEach(function (form) {
      delete form.dataset.sending;
      form.removeAttribute('aria-busy');
    });
  });
})();
`.trim();
