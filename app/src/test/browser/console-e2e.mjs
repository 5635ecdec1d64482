// Drives the dead-letter console of a running `idemkit serve` in headless Chromium (Debian's /usr/bin/chromium) with
// Playwright. Run by ConsoleServeIT, which prepares the dead letters and checks the broker and the database afterwards.
// Input (environment): CONSOLE_URL, OPERATOR_KEY, QUEUE, PROCESSED_ID (a dead letter whose key the inbox holds),
// REDRIVE_IDS (comma-separated, five), GROUP_TYPE (the exception type of the failure group to dry-run and redrive),
// SCREENSHOT (path), GROUPS_SCREENSHOT (path: the failure groups and a group's dry run). Output: one JSON line on stdout
// with what the page showed; any failed expectation exits non-zero with the reason.
import { chromium } from 'playwright-core';

const env = name => {
  const v = process.env[name];
  if (!v) { throw new Error('missing ' + name); }
  return v;
};
const url = env('CONSOLE_URL');
const processedId = env('PROCESSED_ID');
const redriveIds = env('REDRIVE_IDS').split(',');
const groupType = env('GROUP_TYPE');
// a table's rows as arrays of their cells' text
const cells = (page, table) => page.$$eval(table + ' tbody tr', rows => rows.map(r => [...r.cells].map(c => c.textContent)));
// the same once the table holds rows: the page refills a table on every refresh, and a read between its clearing and
// its filling saw none (a .ci/run read an empty groups table); a bounded wait, 10 s
const filledCells = async (page, table) => {
  const end = Date.now() + 10000;
  let rows = await cells(page, table);
  while (rows.length === 0 && Date.now() < end) {
    await page.waitForTimeout(50);
    rows = await cells(page, table);
  }
  return rows;
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const seen = {};
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
  page.setDefaultTimeout(20000);
  await page.goto(url);
  await page.fill('#key', env('OPERATOR_KEY'));
  await page.click('#connect');
  await page.selectOption('#queue', env('QUEUE'));
  await page.locator('#letters tbody tr').first().waitFor();
  // the alert: more dead letters than the threshold
  await page.locator('#alert').waitFor({ state: 'visible' });
  seen.alert = await page.textContent('#alert');
  seen.rows = await page.locator('#letters tbody tr').count();
  // the queue overview (depth, alert, oldest) and the failure groups of the selected queue
  await page.locator('#groups tbody tr').first().waitFor();
  seen.overview = await cells(page, '#overview');
  seen.groupsBefore = await filledCells(page, '#groups');

  // filter by reason: nothing matches, then everything again
  await page.fill('#reason-filter', 'no such reason');
  await page.click('#filter');
  await page.locator('#letters tbody tr').first().waitFor({ state: 'detached' });
  seen.rowsFilteredOut = await page.locator('#letters tbody tr').count();
  await page.fill('#reason-filter', 'TIMED OUT');
  await page.click('#filter');
  await page.locator('#letters tbody tr').first().waitFor();
  seen.rowsFiltered = await page.locator('#letters tbody tr').count();

  // one dead letter: the body only when revealed
  const row = page.locator('#letters tbody tr', { has: page.locator(`input[value="${redriveIds[0]}"]`) });
  await row.locator('button.show').click();
  await page.locator('#reveal').waitFor();
  seen.bodyBeforeReveal = await page.locator('#body').count();
  await page.click('#reveal');
  seen.body = await page.locator('#body').textContent();

  // dry run over the processed one and the five
  for (const id of [processedId, ...redriveIds]) {
    await page.check(`input.pick[value="${id}"]`);
  }
  await page.click('#dry-run');
  await page.locator('#results tbody tr').nth(5).waitFor();
  seen.dryRun = await page.locator('#results tbody tr').allTextContents();

  // the redrive needs an approver: without one the server refuses and the page says so
  await page.uncheck(`input.pick[value="${processedId}"]`);
  await page.click('#redrive');
  await page.waitForFunction(() => document.getElementById('error').textContent.includes('400'));
  seen.withoutApprover = await page.textContent('#error');

  await page.fill('#approver', 'ana');
  await page.fill('#why', 'payment provider is back');
  const countBefore = await page.textContent('#count');
  await page.click('#redrive');
  // the redrive is a job: the page polls it, showing its progress, until it is done; then it reloads the audit,
  // the queues and the list
  await page.waitForFunction(() => /: (running|done), \d+ of 5 done/.test(document.getElementById('progress').textContent));
  seen.progressSeen = await page.textContent('#progress');
  await page.waitForFunction(before => document.querySelectorAll('#results tbody tr').length === 5
    && document.getElementById('progress').textContent.includes(': done, 5 of 5 done')
    && document.querySelectorAll('#audit tbody tr').length >= 2
    && document.getElementById('count').textContent !== before, countBefore);
  seen.progress = await page.textContent('#progress');
  seen.redrive = await page.locator('#results tbody tr').allTextContents();
  seen.audit = await page.locator('#audit tbody tr').allTextContents();
  seen.rowsAfter = await page.locator('#letters tbody tr').count();
  await page.screenshot({ path: env('SCREENSHOT'), fullPage: true });
  await page.waitForFunction(() => document.getElementById('groups-count').textContent.includes(' of 7 '));
  seen.groupsAfter = await cells(page, '#groups');

  // a failure group: dry run first (answered at once, nothing moves), then redriven on one approval, as a job
  const group = page.locator('#groups tbody tr', { hasText: groupType });
  await group.locator('button.group-dry-run').click();
  await page.waitForFunction(() => [...document.querySelectorAll('#results tbody tr')].length > 0
    && [...document.querySelectorAll('#results tbody tr')].every(r => r.textContent.includes('would ')));
  seen.groupDryRun = await page.locator('#results tbody tr').allTextContents();
  await page.screenshot({ path: env('GROUPS_SCREENSHOT'), fullPage: true });
  await page.fill('#why', 'ledger lock released');
  await group.locator('button.group-redrive').click();
  await page.waitForFunction(() => /: done, \d+ of \d+ done/.test(document.getElementById('progress').textContent)
    && document.querySelectorAll('#groups tbody tr').length === 1
    && document.querySelectorAll('#results tbody tr').length > 0
    && ![...document.querySelectorAll('#results tbody tr')].some(r => r.textContent.includes('would ')));
  seen.groupProgress = await page.textContent('#progress');
  seen.groupRedrive = await page.locator('#results tbody tr').allTextContents();
  seen.groupsLast = await cells(page, '#groups');
  seen.auditLast = await page.locator('#audit tbody tr').first().textContent();
  // the other group's redrive without a dry run of it: refused by the page, nothing sent
  await page.locator('#groups tbody tr').first().locator('button.group-redrive').click();
  await page.waitForFunction(() => document.getElementById('error').textContent.includes('dry run this group first'));
  seen.redriveWithoutDryRun = await page.textContent('#error');
  seen.groupsUnchanged = await cells(page, '#groups');
} catch (e) {
  const page = browser.contexts()[0]?.pages()[0];
  if (page) {
    console.error('page error text: ' + await page.textContent('#error').catch(() => '?'));
    await page.screenshot({ path: env('SCREENSHOT').replace(/\.png$/, '-failed.png'), fullPage: true }).catch(() => {});
  }
  throw e;
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
