/** The few HTML pages of the password reset; plain, readable on a phone, no scripts. */
const layout = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Castie</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
input,button{font:inherit;padding:.6rem;width:100%;box-sizing:border-box;margin:.3rem 0}button{background:#5b3cc4;color:#fff;border:0;border-radius:.4rem}
.error{color:#b00020}</style></head>
<body><h1>${title}</h1>${body}</body></html>`;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const error = (message?: string) => (message ? `<p class="error" role="alert">${escape(message)}</p>` : '');

export const page = {
  askForLink: (message?: string) =>
    layout(
      'Reset your password',
      `${error(message)}<p>Enter the e-mail address of your account and we will send you a link to choose a new password.</p>
<form method="post"><label for="email">E-mail</label><input id="email" name="email" type="email" required autocomplete="email"><button type="submit">Send the link</button></form>`,
    ),
  linkSent: () => layout('Check your e-mail', '<p>If an account uses that address, an e-mail with a link to reset the password is on its way. The link works for one hour.</p>'),
  choosePassword: (message?: string) =>
    layout(
      'Choose a new password',
      `${error(message)}<form method="post"><label for="password">New password</label><input id="password" name="password" type="password" minlength="4" required autocomplete="new-password">
<label for="password_confirm">Again</label><input id="password_confirm" name="password_confirm" type="password" minlength="4" required autocomplete="new-password"><button type="submit">Save the password</button></form>`,
    ),
  invalidLink: () => layout('This link does not work', '<p>The link has expired or was used already. <a href="/password_reset/">Ask for a new one.</a></p>'),
  passwordChanged: () => layout('Password changed', '<p>Your new password is saved. Sign in with it in the Castie app.</p>'),
};
