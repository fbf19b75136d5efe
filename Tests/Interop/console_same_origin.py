"""Whether a page the upstream serves can reach the operator console, in headless Chromium.

Usage: console_same_origin.py CONSOLE_BASE PAGE_URL ADMIN_TOKEN DEVICE_ID

Signs in to the console at CONSOLE_BASE, then opens PAGE_URL (an HTML page the upstream serves
through an open route of the gateway) with the console's origin and the device id in its URL. The
page's script fetches the device's console page with the operator's cookie, takes the form token
from it and posts the revocation; then it posts a revocation blind (no-cors, a guessed token).
Prints one JSON object: what the script could read and what its posts answered.
"""
import json
import os
import sys
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait


def main():
    console, page, token, device = sys.argv[1:5]
    options = Options()
    options.binary_location = os.environ.get("SIGNET_CHROMIUM", "/usr/bin/chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(os.environ.get("SIGNET_CHROMEDRIVER", "/usr/bin/chromedriver")))
    driver.set_page_load_timeout(30)
    try:
        driver.get(console + "/signet/admin/sign-in")
        driver.find_element(By.ID, "token").send_keys(token, Keys.ENTER)
        WebDriverWait(driver, 15).until(lambda d: d.get_cookie("signet_console") is not None)
        signed_in = driver.get_cookie("signet_console") is not None
        driver.get(page + "?" + urllib.parse.urlencode({"device": device}) + "#" + urllib.parse.quote(console, safe=""))
        WebDriverWait(driver, 20).until(lambda d: d.title.startswith("done "))
        result = json.loads(driver.title[len("done "):])
        result["signedIn"] = signed_in
        print(json.dumps(result))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
