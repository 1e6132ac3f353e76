// mediasvc dashboard: small progressive enhancements. Every page works without this script.
(function () {
  'use strict';

  // Copy buttons: copy the text of the element named by data-copy-target and say so in a live region.
  document.querySelectorAll('[data-copy-target]').forEach(function (button) {
    button.addEventListener('click', function () {
      var target = document.getElementById(button.getAttribute('data-copy-target'));
      var status = button.closest('section') && button.closest('section').querySelector('.copy-status');
      if (!target) return;
      var text = target.textContent.trim();
      var done = function (ok) {
        if (status) status.textContent = ok ? 'Copied to the clipboard.' : 'Copy did not work; select the text and copy it.';
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
      } else {
        var range = document.createRange();
        range.selectNodeContents(target);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        var ok = false;
        try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
        done(ok);
      }
    });
  });

  // Operation forms with variants (e.g. preview_type): show only the chosen variant's fieldset;
  // the others are disabled so they are neither validated nor sent.
  document.querySelectorAll('select[data-variant-switch]').forEach(function (select) {
    var form = select.form;
    var sync = function () {
      form.querySelectorAll('fieldset[data-variant]').forEach(function (fs) {
        var on = fs.getAttribute('data-variant') === select.value;
        fs.hidden = !on;
        fs.disabled = !on;
      });
    };
    select.addEventListener('change', sync);
    sync();
  });

  // Live progress of a running job: poll the dashboard's JSON endpoint, reload when it ends.
  var live = document.querySelector('[data-job-status-url]');
  if (live) {
    var url = live.getAttribute('data-job-status-url');
    var bar = document.getElementById('job-progress');
    var text = document.getElementById('job-progress-text');
    var poll = function () {
      fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
        .then(function (res) {
          if (res.status === 401 || res.status === 404) { window.location.reload(); return null; }
          return res.ok ? res.json() : null;
        })
        .then(function (job) {
          if (!job) { setTimeout(poll, 3000); return; }
          if (job.status === 'completed' || job.status === 'failed') { window.location.reload(); return; }
          var p = job.progress === null ? 0 : job.progress;
          if (bar) { bar.value = p; bar.textContent = p + '%'; }
          var line = job.status + ', ' + p + '%';
          if (text && text.textContent !== line) text.textContent = line;
          setTimeout(poll, 1000);
        })
        .catch(function () { setTimeout(poll, 3000); });
    };
    setTimeout(poll, 1000);
  }
})();
