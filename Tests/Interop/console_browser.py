"""Drives the operator console in headless Chromium (Debian's chromium + chromedriver, Selenium).

Usage: console_browser.py BASE ADMIN_TOKEN DEVICE_ID KEY_ID SIGNED_REQUEST_JSON [--screenshots DIR]

Signs in, finds the device, is refused with a forged form token, revokes the device, sends the
device's next signed request (prepared by the test, sent here with python-requests), and sees the
refusal on the refusals page and in the overview. Every page is checked with axe-core (WCAG 2.1
A and AA, and axe's best practices: labels, contrast, landmarks, keyboard order). Prints one JSON
object of what it saw; exits non-zero on the first step that does not hold.
"""
import importlib.util
import json
import os
import sys
import time

import requests
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait


def main():
    base, token, device_id, key_id, signed_path = sys.argv[1:6]
    shots = sys.argv[7] if len(sys.argv) > 7 and sys.argv[6] == "--screenshots" else None
    options = Options()
    options.binary_location = os.environ.get("SIGNET_CHROMIUM", "/usr/bin/chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,1000"):
        options.add_argument(flag)
    service = Service(os.environ.get("SIGNET_CHROMEDRIVER", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    seen = {"axe": {}}
    axe_folder = importlib.util.find_spec("axe_playwright_python").submodule_search_locations[0]
    with open(os.path.join(axe_folder, "axe.min.js")) as handle:
        axe_source = handle.read()

    def check(condition, what):
        if not condition:
            raise AssertionError(what + " at " + driver.current_url + "\n" + driver.page_source[:2000])

    def shot(name):
        if shots:
            driver.save_screenshot(os.path.join(shots, name + ".png"))

    def heading():
        headings = driver.find_elements(By.TAG_NAME, "h1")
        return headings[0].text if headings else ""

    def wait(condition, what):
        """A form posted by Enter or a click may still be navigating: wait for the page it leads to."""
        try:
            WebDriverWait(driver, 15).until(lambda _: condition())
        except Exception:
            pass
        check(condition(), what)

    def accessible(name):
        """axe-core on the page as rendered; WebDriver's scripts are not the page's, so the CSP allows them."""
        driver.execute_script(axe_source)
        result = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})"
            ".then(done).catch(error => done({error: String(error)}));"
        )
        check("error" not in result, "axe ran on " + name + ": " + str(result.get("error")))
        violations = [
            (violation["id"], violation["impact"], [node["html"][:120] for node in violation["nodes"][:3]])
            for violation in result["violations"]
        ]
        check(not violations, "accessibility of " + name + ": " + json.dumps(violations))
        seen["axe"][name] = len(result["passes"])

    try:
        # No session: every page leads to the sign-in form.
        driver.get(base + "/signet/admin/devices/" + device_id)
        check(heading() == "Sign in", "no session must lead to sign-in")
        seen["withoutSession"] = driver.current_url.endswith("/signet/admin/sign-in")
        shot("sign-in")
        accessible("sign-in")

        # A wrong token is refused; the right one, typed and submitted by keyboard, signs in.
        field = driver.find_element(By.ID, "token")
        check(driver.find_element(By.CSS_SELECTOR, "label[for=token]").text == "Admin token", "labelled token field")
        field.send_keys("not-the-token", Keys.ENTER)
        wait(lambda: "admin_unauthorized" in driver.page_source, "wrong token refused")
        driver.find_element(By.ID, "token").send_keys(token, Keys.ENTER)
        wait(lambda: heading() == "Overview", "signed in to the overview")
        cookie = driver.get_cookie("signet_console")
        check(cookie is not None and cookie["httpOnly"] and cookie.get("sameSite") == "Strict", "strict session cookie")
        seen["cookie"] = {"httpOnly": cookie["httpOnly"], "sameSite": cookie.get("sameSite")}

        # Find the device by its key id.
        driver.find_element(By.LINK_TEXT, "Devices").click()
        wait(lambda: heading() == "Devices", "the devices page")
        driver.find_element(By.ID, "q").send_keys(key_id, Keys.ENTER)
        wait(lambda: "q=" in driver.current_url, "the search ran")
        rows = driver.find_elements(By.CSS_SELECTOR, "#device-table tbody tr")
        check(len(rows) == 1 and device_id in rows[0].text, "search by key id finds the device")
        shot("devices")
        accessible("devices")
        driver.find_element(By.LINK_TEXT, device_id).click()
        wait(lambda: heading().startswith("Device "), "the device's page")
        check(driver.find_element(By.ID, "device-status").text == "active", "device active")
        shot("device")
        accessible("device")

        # A forged form token (what a cross-site page would have to guess) is refused.
        driver.execute_script("document.querySelector('.danger input[name=csrf]').value = 'forged-token'")
        driver.find_element(By.ID, "confirm").click()
        driver.find_element(By.ID, "revoke").click()
        WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "reason-code"))
        check(driver.find_element(By.ID, "reason-code").text == "csrf_invalid", "forged CSRF token refused")
        seen["forgedCSRF"] = "csrf_invalid"
        driver.get(base + "/signet/admin/devices/" + device_id)
        check(driver.find_element(By.ID, "device-status").text == "active", "still active after the forged attempt")

        # Unconfirmed, the browser itself will not submit (the checkbox is required); confirmed, it revokes.
        driver.find_element(By.ID, "revoke").click()
        check(heading().startswith("Device "), "required confirmation keeps the form on the page")
        driver.find_element(By.ID, "confirm").click()
        driver.find_element(By.ID, "revoke").click()
        WebDriverWait(driver, 10).until(lambda d: "revoked=1" in d.current_url)
        check(driver.find_element(By.ID, "device-status").text == "revoked", "device revoked")
        check("Device revoked." in driver.page_source, "revocation notice")

        # The device's next signed request is refused.
        with open(signed_path) as handle:
            signed = json.load(handle)
        answer = requests.request(
            signed["method"], signed["url"], headers=signed["headers"], data=signed["body"].encode(), timeout=30
        )
        check(answer.status_code == 401 and answer.json().get("reason") == "key_revoked", "revoked key refused")
        seen["nextRequest"] = answer.json().get("reason")

        # The console writes activity every second.
        time.sleep(1.5)
        driver.find_element(By.LINK_TEXT, "Refusals").click()
        wait(lambda: heading() == "Refusals", "the refusals page")
        rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#refusal-table tbody tr")]
        check(any("key_revoked" in row and key_id in row for row in rows), "refusal listed with its key id")
        seen["refusals"] = [row for row in rows if "key_revoked" in row]
        # Grouped above the rows, with a count and the next step.
        groups = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#refusal-groups tbody tr")]
        check(any("key_revoked" in row and "revoked device" in row for row in groups), "refusals grouped with the next step")
        # The axes of the chart: a unit, and times on the time axis.
        driver.find_element(By.LINK_TEXT, "Overview").click()
        wait(lambda: heading() == "Overview", "the overview")
        ticks = [text.text for text in driver.find_elements(By.CSS_SELECTOR, "#hour ~ figure svg text.tick")]
        check(any(":" in tick for tick in ticks) and "0" in ticks, "the hour chart has time and count ticks")
        check("requests / min" in driver.find_element(By.CSS_SELECTOR, "svg.chart text.unit").text, "the chart's unit")
        driver.find_element(By.LINK_TEXT, "Refusals").click()
        wait(lambda: heading() == "Refusals", "the refusals page")
        # The console's own icon: the browser asked for no /favicon.ico the gateway would refuse.
        check(not any("favicon" in row for row in rows), "no favicon refusal")
        shot("refusals")
        accessible("refusals")

        driver.find_element(By.LINK_TEXT, "Overview").click()
        wait(lambda: heading() == "Overview", "the overview")
        caption = driver.find_element(By.ID, "hour-caption").text
        refused = int(caption.split(" refused")[0].split(", ")[-1])
        check(refused >= 1, "the chart counts the refusal")
        path = driver.find_element(By.CSS_SELECTOR, "svg.chart path.refused").get_attribute("d")
        check(path.startswith("M"), "the chart draws the refusal")
        reasons = driver.find_element(By.ID, "reason-table").text
        check("key_revoked" in reasons, "refusals by reason")
        # A monitored route's would-be refusals apart from the refusals.
        monitored = driver.find_elements(By.ID, "monitored-table")
        seen["monitored"] = monitored[0].text if monitored else None
        seen["chartRefused"] = refused
        shot("overview")
        accessible("overview")

        for page, name in (("Users", "users"), ("Pin reports", "pin-reports"), ("Keys", "keys"), ("Audit log", "audit")):
            driver.find_element(By.LINK_TEXT, page).click()
            wait(lambda: heading() == page, "the page " + page)
            shot(name)
            accessible(name)
        check("device.revoke" in driver.page_source and device_id in driver.page_source, "audited")
        seen["audit"] = "device.revoke"

        # Signing out ends the session.
        driver.find_element(By.CSS_SELECTOR, ".sign-out button").click()
        WebDriverWait(driver, 10).until(lambda d: d.current_url.endswith("/sign-in"))
        driver.get(base + "/signet/admin/overview")
        check(heading() == "Sign in", "signed out")
        seen["signedOut"] = True
    finally:
        driver.quit()
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
