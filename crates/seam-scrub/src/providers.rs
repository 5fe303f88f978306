//! Names of API and SaaS providers whose credentials are random tokens with no format of their
//! own. A machine-made token standing next to one of these names (`cloudimage: "d__9rvl…"`,
//! `luno '1XyDP7…'`, `plaid client id - '60e3ee…'`) is taken for that provider's key: the
//! provider's name is the context that shape alone cannot give.
//!
//! The list is of provider names, never of values. Names shorter than four letters are matched
//! only as whole words.

pub(crate) static PROVIDER_NAMES: &str = "
abbysale abstractapi abuseipdb abyssale accuweather adafruit adafruitio adobe adobeio adzuna
aeroworkflow agora aha aiven airbrake aircall airship airtable airvisual alchemy alconost alegra
aletheia aletheiaapi algolia alibaba alienvault allsports amadeus ambee amplitude anthropic
anypoint api2cart apideck apiflash apify apilayer apimatic apiscience apitemplate apollo
appcues appfollow appointedd appsynergy apptivo artifactory artsy asana assemblyai atera
atlassian audd auth0 autodesk autoklose autopilot avaza aviationstack axonaut aylien ayrshare
azure bannerbear baremetrics beamer beebole besnappy besttime billomat bitbar bitbucket
bitcoinaverage bitfinex bitly bitmex blazemeter blitapp blocknative blogger bombbomb boostnote
borgbase braintree braintrust brandfetch browserstack browshot bscscan buddyns budibase
bugherd bugsnag buildkite bulbul bulksms buttercms caflou calendarific calendly calorieninja
campayn captaindata carboninterface cashboard caspio censys centralstation cexio cex.io
chartmogul chatbot chatfuel chatfule checio checkout checkvist cicero circleci clarifai
clearbit clickhelp clicksend clickup cliengo clientary clinchpad clockify clockwork
clockworksms closecrm cloudconvert cloudelements cloudflare cloudimage cloudinary cloudmersive
cloudplan cloudsmith cloverly cloze clustdoc coda codacy codeclimate codemagic codequiry
cohere coinapi coinbase coinlayer coinlib collect2 commercejs commodities companyhub
confluence confluent contentful conversiontools convertapi convertkit convier copper
countrylayer courier coveralls craftmypdf crowdin cryptocompare currencycloud currencyfreaks
currencylayer currencyscoop currentsapi customerguru customerio d7network dailyco dandelion
dareboost databox datadog datagov debounce deepai deepgram deepseek delighted demio deputy
detectify detectlanguage dfuse diffbot diggernaut digitalocean discord disqus ditto dnscheck
dockerhub docparser documo docusign doppler dotmailer dovico dronahq dropbox duffel duply
dwolla dynalist dyspatch eagleeyenetworks easyinsight ecostruxure ecostruxureit edamam edenai
elasticemail elevenlabs enablex endorlabs enigma etherscan ethplorer etsy eventbrite everhour
exchangerate exchangerates exportsdk extractorapi facebook faceplusplus fastforex fastly
feedier fetchrss fibery figma fileio finage financialmodelingprep findl finnhub fixerio
flatio fleetbase flickr flightapi flightlabs flightstats float flowdash flowflu flutterwave
fmfw formbucket formio formsite fortnox foursquare frameio freshbooks freshdesk freshworks
fulcrum fullstory fxmarket geckoboard gemini gengo geoapify geocodify geocodio geoipifi
getemail getemails getgeoapi getgist getresponse getsandbox github gitlab gitter glassnode
gocanvas gocardless godaddy goodday grafana graphcms graphhopper groovehq groq gtmetrix
guardian guardianapi gumroad guru gyazo happi happyscribe harness harvest hellosign
helpcrunch helpscout hereapi heroku hive hiveage holistic honeycomb hubspot huggingface humanity
hunter hybiscus hypertrack iconfinder iexapis iexcloud imagekit imagga impala infura
insightly instabot instamojo integromat intercom interseller intra42 intrinio invoiceocean
ip2location ipapi ipgeolocation ipinfo ipinfodb ipquality ipstack jdbc jira jotform jumpcloud
jupiterone juro kanban kanbantool karmacrm keenio kickbox klaviyo klipfolio knapsackpro
kontent kraken kucoin kylas langsmith languagelayer larksuite lastfm launchdarkly leadfeeder
lemlist lemonsqueezy lendflow lessannoyingcrm lexigram linear linearapi linemessaging
linenotify linkedin linkpreview liveagent livestorm loadmill lob locationiq loggly loginradius
logzio lokalise loyverse lunchmoney luno m3o madkudu magicbell mailboxlayer mailchimp
mailerlite mailgun mailjet mailmodo mailsac mandrill mapbox mapquest marketstack mavenlink
maxmind meaningcloud mediastack meistertask meraki mercury mesibo messagebird metaapi metabase
metrilo microsoftteams mindmeister miro mistral mite mixmax mixpanel moderation mojohelpdesk
monkeylearn moonclerk moosend moralis mrticktock mux myfreshworks myintervals nasdaq
nasdaqdatalink nethunt netlify netsuite neutrinoapi newrelic newsapi newscatcher nexmo
nftport ngrok nicereply nightfall nimble noticeable notion nozbe nozbeteams npm nuget
numverify nutritionix nylas oanda octopus okta omnisend onedesk onelogin onepagecrm onesignal
onfleet oopspam openai opencage opencagedata openrouter openuv openvpn openweather opsgenie
optimizely overloop owlbot packagecloud pagarme pagerduty pandadoc pandascore paperform
paralleldots parsehub parseur partnerstack pastebin paydirt paydirtapp paymoapp paymongo
paypal paystack pdflayer pdfshift peopledatalabs pepipost percy perplexity photoroom phrase
pinata pinecone pipedream pipedrive pivotal pivotaltracker pixabay plaid planetscale
planviewleankit planyo plivo podio pollsapi poloniex portainer positionstack postageapp
postbacks posthog postman postmark powrbot prefect printfection prodpad prospectcrm
protocolsio proxycrawl pubnub pulumi purestake pushbullet pusher pushover qase qualaroo qubole
quickmetrics railway railwayapp ramp rapidapi raven rawg razorpay reachmail readme
rebrandly rechargepayments refiner rentman repairshopr replicate replyio requestfinance
restpack revampcrm ringcentral ritekit roaring rocketreach rockset route4me rownd rubygems
salad saladcloud salesblink salescookie salesflare salesforce salesmate satismeter saucelabs
scalewaykey scaleway scalr scrapeowl scraperapi scraperbox scrapestack scrapfly scrapingant
scrapingbee screenshotapi screenshotlayer scrutinizer scrutinizerci securitytrails segment
selectpdf semaphore sendbird sendgrid sendinblue sentry serphouse serpstack sheety sherpadesk
shipday shodan shopify shortcut shotstack shutterstock signalwire signaturit sigopt simfin
simplesat simplynoted simvoly sinchmessage siteleaf skrappio skybiometry slack smartsheet
smartsheets smartystreets smooch snipcart snyk solarwinds sonarcloud sourcegraph sparkpost
speechtext speechtextai splunk spoonacular sportsmonk spotify square squareapp squarespace
sslmate statuscake statuspage statuspal stitchdata stockdata storecove stormboard stormglass
storyblok storychief strava stripe stripo stytch sugester sumologic supabase supernotes
surveyanyplace surveybot surveysparrow survicate swell swiftype tailscale tallyfy tatumio
taxjar teamgate teamwork teamworkcrm teamworkdesk teamworkspaces technicalanalysisapi
telegram teletype telnyx terraform terraformcloud testingbot theoddsapi thinkific
thousandeyes ticketmaster tickettailor tiingo timecamp timezoneapi tineswebhook tly tmetric
todoist toggl toggltrack tokeet tomorrowio tomtom tradier transferwise travelpayouts travisci
trello truenas twelvedata twilio twitch twitter typeform typetalk ubidots uclassify unifyid
unplugg unsplash upcdatabase uplead uploadcare uptimerobot upwave urlscan userflow userstack
vagrant vatlayer vbout vercel verifier verimail veriphone versioneye viewneo virustotal
visualcrossing voicegain voodoosms vouchery vpnapi vultr vyte walkscore wandb weatherbit
weatherstack web3storage webex webflow webscraper webscraping websitepulse weightsandbiases
whoxy wistia wit worksnaps workstack worldcoinindex worldweather wrike xai yandex yelp
youneedabudget yousign youtube zapier zendesk zenkit zenrows zenscrape zenserp zeplin
zerobounce zerotier zipapi zipbooks zipcodeapi zipcodebase zoho zohocrm zonka zonkafeedback
zulipchat
brevo cerebras firecrawl fireworks gitea hcloud hetzner linode mailersend rollbar sonarcloud sonarqube
tavily tencentcloud upstash woocommerce
";

/// Provider names as a list.
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    PROVIDER_NAMES.split_ascii_whitespace()
}
