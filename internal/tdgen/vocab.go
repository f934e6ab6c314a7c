package tdgen

// The vocabulary below is written out by hand so that full-text search over a generated
// corpus finds the words people actually type ("invoice", "Rechnung", "天気"), and so that
// affordance names look like the ones real agents and tools expose. Strings are appended to
// the output without escaping: none of them may contain a double quote, a backslash or a
// control character (TestVocabularyNeedsNoEscaping keeps it so).

// Languages in the order they appear in "titles" and "descriptions"; English comes first
// and is always present.
var languages = [nLang]string{"en", "de", "fr", "es", "it", "ja", "zh"}

const nLang = 7

// Language indexes whose title pattern differs from the others.
const (
	langDE = 1
	langFR = 2
	langES = 3
	langIT = 4
	langJA = 5 // the languages from here on are written without spaces between words
)

// kindWords are the localized words for "Agent" and "Tool".
var kindWords = [2][nLang]string{
	{"Agent", "Agent", "Agent", "Agente", "Agente", "エージェント", "智能体"},
	{"Tool", "Werkzeug", "Outil", "Herramienta", "Strumento", "ツール", "工具"},
}

type vendor struct {
	name string
	slug string // a single lower-case word, used in capability URNs
	host string // the .example TLD (RFC 2606) keeps every generated URL unresolvable
}

var vendors = []vendor{
	{"Northwind Analytics", "northwind", "northwind-analytics.example"},
	{"Bluefin Systems GmbH", "bluefin", "bluefin-systems.example"},
	{"Helios Energy Labs", "helios", "helios-energy.example"},
	{"Kestrel Logistics Ltd.", "kestrel", "kestrel-logistics.example"},
	{"Aurora Health Technologies", "aurorahealth", "aurora-health.example"},
	{"Lingua Bridge AG", "linguabridge", "linguabridge.example"},
	{"Quantix Software Inc.", "quantix", "quantix.example"},
	{"Meridian Travel Technologies", "meridian", "meridian-travel.example"},
	{"Copperleaf Finance", "copperleaf", "copperleaf.example"},
	{"Stratus Weather Services", "stratus", "stratus-weather.example"},
	{"Tannenberg Telekom GmbH", "tannenberg", "tannenberg-telekom.example"},
	{"Sakura Digital K.K.", "sakura", "sakura-digital.example"},
	{"Dragonfly AI Ltd.", "dragonfly", "dragonfly-ai.example"},
	{"Vireo Retail Group", "vireo", "vireo-retail.example"},
	{"Polaris Data S.A.", "polaris", "polaris-data.example"},
	{"Fjordline Robotics AS", "fjordline", "fjordline.example"},
	{"Cedar & Stone Consulting", "cedarstone", "cedar-stone.example"},
	{"Albatross Mobility", "albatross", "albatross-mobility.example"},
	{"Orchid Care Systems", "orchid", "orchid-care.example"},
	{"Ironbridge Security", "ironbridge", "ironbridge.example"},
	{"Pelican Payments", "pelican", "pelican-payments.example"},
	{"Silverline Support Solutions", "silverline", "silverline-support.example"},
	{"Zenith Scheduling Co.", "zenith", "zenith-scheduling.example"},
	{"Sirocco Assistants SAS", "sirocco", "sirocco-assistants.example"},
	{"Granite Peak Labs", "granitepeak", "granitepeak.example"},
}

// brands are product names put in front of the domain noun ("Nimbus Weather Agent"); they
// are capitalized ASCII words because their lower-case form is also a URL path segment.
var brands = []string{
	"Nimbus", "Atlas", "Helix", "Orion", "Quill", "Beacon", "Compass", "Ember", "Falcon",
	"Harbor", "Juniper", "Lyra", "Mosaic", "Nova", "Onyx", "Pebble", "Quasar", "Raven",
	"Sage", "Tempo", "Umber", "Vega", "Willow", "Zephyr", "Aria", "Basalt", "Cobalt",
	"Delta", "Echo", "Fable", "Garnet", "Halcyon", "Iris", "Jasper", "Kite", "Marlin",
	"Nectar", "Opal", "Prism", "Tundra",
}

// otherTypes are the second @type of Things that carry two; the schema: ones make the
// generator declare the schema prefix in @context.
var otherTypes = []string{"schema:SoftwareApplication", "schema:WebAPI", "Thing", "schema:Service"}

type schema struct {
	typ, desc, format, unit string
	enum                    []string
	min, max, minLength     string // JSON number literals; empty when absent
	def                     string // a JSON literal; empty when absent
	fields                  []field
	items                   *schema
}

type field struct {
	name     string
	s        *schema
	required bool
}

func str(desc string) *schema { return &schema{typ: "string", desc: desc} }

// text is a string that must not be empty: free text the caller types.
func text(desc string) *schema { return &schema{typ: "string", desc: desc, minLength: "1"} }

func formatted(desc, format string) *schema {
	return &schema{typ: "string", desc: desc, format: format}
}

func enum(desc string, values ...string) *schema {
	return &schema{typ: "string", desc: desc, enum: values}
}

func number(desc, minimum, maximum, unit string) *schema {
	return &schema{typ: "number", desc: desc, min: minimum, max: maximum, unit: unit}
}

func integer(desc, minimum, maximum string) *schema {
	return &schema{typ: "integer", desc: desc, min: minimum, max: maximum}
}

func boolean(desc string) *schema { return &schema{typ: "boolean", desc: desc} }

func object(desc string, fields ...field) *schema {
	return &schema{typ: "object", desc: desc, fields: fields}
}

func array(desc string, items *schema) *schema {
	return &schema{typ: "array", desc: desc, items: items}
}

func req(name string, s *schema) field { return field{name: name, s: s, required: true} }
func opt(name string, s *schema) field { return field{name: name, s: s} }

type section uint8

const (
	propSec section = iota
	actionSec
	eventSec
)

type affordance struct {
	sec        section
	name, desc string
	data       *schema // the property's value, the action's input, the event's data
	output     *schema // actions only
	safe, idem bool    // actions only
	writable   bool    // properties only
	observable bool    // properties only
}

func action(name, desc string, in, out *schema, safe, idempotent bool) affordance {
	return affordance{sec: actionSec, name: name, desc: desc, data: in, output: out, safe: safe, idem: idempotent}
}

func property(name, desc string, s *schema, writable, observable bool) affordance {
	return affordance{sec: propSec, name: name, desc: desc, data: s, writable: writable, observable: observable}
}

func event(name, desc string, data *schema) affordance {
	return affordance{sec: eventSec, name: name, desc: desc, data: data}
}

// capability follows the shape of the LMOS control plane documentation: an id (a URN built
// from vendor, domain and key), a name, a version, a description and example utterances.
type capability struct {
	key, name, desc string
	examples        []string
}

type domain struct {
	key  string
	noun [nLang]string // how the domain qualifies "Agent"/"Tool" in each language
	desc [2][nLang]string
	aff  []affordance // actions first: the first affordance of a TD is one of them
	caps []capability
}

// Schemas used by several affordances.
var (
	location     = str("City name, postal code or latitude,longitude.")
	dateTime     = formatted("Point in time (RFC 3339).", "date-time")
	day          = formatted("Calendar day (ISO 8601).", "date")
	uri          = formatted("Absolute URL.", "uri")
	email        = formatted("E-mail address.", "email")
	amount       = number("Amount of money.", "0", "", "EUR")
	temperature  = number("Air temperature.", "-90", "60", "celsius")
	invoiceID    = str("Invoice number.")
	customerID   = str("Customer account number.")
	ticketID     = str("Support ticket number.")
	trackingNo   = str("Tracking number of the shipment.")
	conversation = str("Identifier of the conversation.")
	count        = integer("Number of items.", "0", "")
	currency     = enum("ISO 4217 currency code.", "EUR", "USD", "GBP", "CHF", "JPY")
	langTag      = str("BCP 47 language tag, e.g. de or pt-BR.")
	severity     = enum("Severity of the warning.", "minor", "moderate", "severe", "extreme")
	address      = object("Postal address.",
		req("name", str("Name of the person or company.")),
		req("street", str("Street and house number.")),
		req("postalCode", str("Postal code.")),
		req("city", str("City.")),
		req("country", str("ISO 3166-1 alpha-2 country code.")))
)

// agentAffordances are what conversational agents expose beside their domain.
var agentAffordances = []affordance{
	action("chat", "Sends one conversation turn to the agent and returns its answer.",
		object("", req("conversationId", conversation), req("turn", text("What the user said.")),
			opt("locale", &schema{typ: "string", desc: "Language of the conversation.", def: `"en"`})),
		object("", req("answer", str("The agent's reply.")), opt("confidence", number("Confidence of the answer.", "0", "1", ""))),
		false, false),
	action("resetConversation", "Forgets the history of a conversation.",
		object("", req("conversationId", conversation)),
		object("", req("reset", boolean("Whether a conversation was found and reset."))),
		false, true),
	property("modelConfiguration", "Current configuration of the underlying LLM, including version, temperature, and maximum tokens.",
		object("", req("modelName", str("Name of the model in use.")),
			opt("temperature", number("Temperature setting for controlling response randomness.", "0", "1", "")),
			opt("maxTokens", integer("Maximum number of tokens the model may generate.", "1", ""))),
		false, false),
	property("supportedLanguages", "Languages the agent converses in.", array("", langTag), false, false),
	event("escalated", "A conversation was handed over to a human.",
		object("", req("conversationId", conversation), opt("reason", str("Why the agent gave up.")))),
	event("userFeedbackReceived", "Emitted when a user rates an answer from 1 to 5.",
		object("", req("rating", integer("User rating, where 1 is the lowest and 5 the highest.", "1", "5")),
			opt("comment", str("Optional comment of the user.")))),
}

// commonAffordances are operational members of agents and tools alike.
var commonAffordances = []affordance{
	property("health", "Whether the service is fully operational.", enum("", "ok", "degraded", "down"), false, true),
	property("rateLimit", "Request quota of the calling client.",
		object("", req("limit", integer("Requests allowed per window.", "1", "")),
			req("remaining", integer("Requests left in the current window.", "0", "")),
			opt("resetAt", dateTime)),
		false, false),
	event("quotaExceeded", "The client used up its request quota.",
		object("", req("limit", integer("Requests allowed per window.", "1", "")), opt("window", enum("Length of the window.", "minute", "hour", "day")))),
}

// The US-English spell checker would flag the other languages' words.
//
//nolint:misspell // translations are spelled in their own language
var domains = []domain{
	{
		key:  "weather",
		noun: [nLang]string{"Weather", "Wetter", "météo", "clima", "meteo", "天気", "天气"},
		desc: [2][nLang]string{{
			"Provides current weather conditions, hourly forecasts and severe weather alerts for any city or coordinates.",
			"Liefert aktuelle Wetterdaten, stündliche Vorhersagen und Unwetterwarnungen für jede Stadt oder Koordinate.",
			"Fournit la météo actuelle, des prévisions horaires et des alertes météo pour toute ville ou coordonnée.",
			"Ofrece el tiempo actual, pronósticos por hora y avisos de fenómenos adversos para cualquier ciudad o coordenada.",
			"Fornisce le condizioni meteo attuali, previsioni orarie e allerte meteo per qualsiasi città o coordinata.",
			"任意の都市や座標の現在の天気、時間ごとの予報、気象警報を提供します。",
			"提供任意城市或坐标的当前天气、逐小时预报和恶劣天气预警。",
		}, {
			"Answers questions about temperature, precipitation, wind speed, humidity and UV index.",
			"Beantwortet Fragen zu Temperatur, Niederschlag, Windgeschwindigkeit, Luftfeuchtigkeit und UV-Index.",
			"Répond aux questions sur la température, les précipitations, la vitesse du vent, l'humidité et l'indice UV.",
			"Responde preguntas sobre temperatura, precipitación, velocidad del viento, humedad e índice UV.",
			"Risponde a domande su temperatura, precipitazioni, velocità del vento, umidità e indice UV.",
			"気温、降水量、風速、湿度、UV指数に関する質問に答えます。",
			"回答有关气温、降水、风速、湿度和紫外线指数的问题。",
		}},
		aff: []affordance{
			action("getWeather", "Returns the current weather conditions for a location.",
				object("", req("location", location), opt("units", enum("Unit system of the result.", "metric", "imperial"))),
				object("", req("temperature", temperature),
					req("condition", enum("Sky condition.", "clear", "cloudy", "rain", "snow", "storm", "fog")),
					opt("humidity", integer("Relative humidity in percent.", "0", "100")),
					opt("windSpeed", number("Wind speed.", "0", "400", "km/h"))),
				true, true),
			action("getForecast", "Returns a daily weather forecast for up to 14 days.",
				object("", req("location", location), opt("days", integer("Number of days.", "1", "14"))),
				array("Daily forecast entries.", object("",
					req("date", day), req("high", number("Daily maximum temperature.", "-90", "60", "celsius")),
					req("low", number("Daily minimum temperature.", "-90", "60", "celsius")),
					opt("precipitationProbability", integer("Chance of precipitation in percent.", "0", "100")))),
				true, true),
			action("getAirQuality", "Reports the air quality index and the dominant pollutant.",
				object("", req("location", location)),
				object("", req("aqi", integer("Air quality index.", "0", "500")),
					opt("dominantPollutant", enum("Pollutant with the highest concentration.", "pm25", "pm10", "o3", "no2", "so2", "co"))),
				true, true),
			action("subscribeAlerts", "Registers a region for severe weather alerts.",
				object("", req("region", str("Region to watch.")), opt("minimumSeverity", severity)),
				object("", req("subscriptionId", str("Identifier of the subscription."))),
				false, true),
			property("defaultUnits", "Unit system used when a request names none.", enum("", "metric", "imperial"), true, false),
			property("stationCount", "Number of weather stations feeding the model.", integer("", "0", ""), false, false),
			property("lastObservation", "Time of the most recent observation.", dateTime, false, true),
			event("severeWeatherAlert", "Emitted when a severe weather warning is issued for a subscribed region.",
				object("", req("region", str("Affected region.")), req("severity", severity),
					req("headline", str("Short summary of the warning.")), opt("validUntil", dateTime))),
			event("forecastUpdated", "Emitted when a new forecast model run is available.",
				object("", req("modelRun", dateTime), opt("regions", array("Regions covered.", str("Region name."))))),
		},
		caps: []capability{
			{"forecast", "Weather Forecast", "Gives current conditions and multi-day forecasts.",
				[]string{"Will it rain in Hamburg tomorrow?", "What is the weather this weekend?", "How warm will it be on Friday?"}},
			{"alerts", "Severe Weather Alerts", "Warns about storms, heat waves and flooding.",
				[]string{"Are there storm warnings near me?", "Tell me when a heat warning is issued."}},
			{"air-quality", "Air Quality", "Reports air pollution and pollen levels.",
				[]string{"How is the air quality in Milan today?", "Is the pollen count high?"}},
		},
	},
	{
		key:  "billing",
		noun: [nLang]string{"Billing", "Rechnungs", "de facturation", "facturación", "di fatturazione", "請求", "账单"},
		desc: [2][nLang]string{{
			"Explains invoices, payments, tariffs and outstanding balances of a customer account.",
			"Erklärt Rechnungen, Zahlungen, Tarife und offene Beträge eines Kundenkontos.",
			"Explique les factures, les paiements, les tarifs et les soldes impayés d'un compte client.",
			"Explica facturas, pagos, tarifas y saldos pendientes de una cuenta de cliente.",
			"Spiega fatture, pagamenti, tariffe e saldi aperti di un conto cliente.",
			"顧客アカウントの請求書、支払い、料金プラン、未払い残高を説明します。",
			"解释客户账户的发票、付款、资费和未结余额。",
		}, {
			"Creates invoices, records payments and sends payment reminders when an invoice is overdue.",
			"Erstellt Rechnungen, verbucht Zahlungen und verschickt Zahlungserinnerungen, wenn eine Rechnung überfällig ist.",
			"Crée des factures, enregistre les paiements et envoie des relances lorsqu'une facture est en retard.",
			"Crea facturas, registra pagos y envía recordatorios cuando una factura está vencida.",
			"Crea fatture, registra i pagamenti e invia solleciti quando una fattura è scaduta.",
			"請求書を作成し、支払いを記録し、期限切れの請求書について督促を送信します。",
			"创建发票、记录付款，并在发票逾期时发送付款提醒。",
		}},
		aff: []affordance{
			action("createInvoice", "Creates an invoice for a customer and returns its number.",
				object("", req("customerId", customerID),
					req("lineItems", array("Invoice positions.", object("",
						req("description", str("Text of the position.")),
						req("quantity", integer("Number of units.", "1", "")),
						req("unitPrice", number("Price per unit.", "0", "", "EUR"))))),
					opt("currency", currency), opt("dueDate", day)),
				object("", req("invoiceId", invoiceID), req("total", amount)),
				false, false),
			action("getInvoice", "Returns an invoice with its positions and payment status.",
				object("", req("invoiceId", invoiceID)),
				object("", req("invoiceId", invoiceID),
					req("status", enum("Payment status.", "open", "paid", "overdue", "cancelled")),
					req("total", amount), opt("dueDate", day)),
				true, true),
			action("explainInvoice", "Explains the positions of an invoice in plain language.",
				object("", req("invoiceId", invoiceID), opt("language", langTag)),
				str("Explanation of the invoice."),
				true, true),
			action("recordPayment", "Records a payment against an open invoice.",
				object("", req("invoiceId", invoiceID), req("amount", amount), opt("paidAt", dateTime)),
				object("", req("balance", number("Remaining balance of the invoice.", "", "", "EUR"))),
				false, false),
			action("sendPaymentReminder", "Sends a payment reminder for an overdue invoice.",
				object("", req("invoiceId", invoiceID), opt("channel", enum("How the reminder is sent.", "email", "sms", "letter"))),
				object("", req("sentAt", dateTime)),
				false, false),
			property("outstandingBalance", "Sum of all open invoices of the account.", number("", "0", "", "EUR"), false, true),
			property("billingCycle", "Billing period of the account.", enum("", "monthly", "quarterly", "yearly"), true, false),
			property("taxRate", "VAT rate applied to new invoices.", number("", "0", "30", "percent"), false, false),
			event("invoiceCreated", "A new invoice was issued.",
				object("", req("invoiceId", invoiceID), req("customerId", customerID), opt("total", amount))),
			event("paymentReceived", "A payment was booked against an invoice.",
				object("", req("invoiceId", invoiceID), req("amount", amount),
					opt("method", enum("Payment method.", "card", "sepa", "wallet", "transfer")))),
			event("invoiceOverdue", "An invoice passed its due date unpaid.",
				object("", req("invoiceId", invoiceID), req("daysOverdue", integer("Days since the due date.", "1", "")))),
		},
		caps: []capability{
			{"invoice-view", "View Bills", "Lets a customer retrieve and understand their latest invoices.",
				[]string{"show my bill", "why is my invoice higher this month?", "how much do I owe?"}},
			{"payment-status", "Payment Status", "Reports whether a payment was received.",
				[]string{"did you get my payment?", "when is my bill due?"}},
			{"change-address", "Change Billing Address", "Updates the billing address of a customer.",
				[]string{"update my billing address", "I moved, please change my address"}},
		},
	},
	{
		key:  "travel",
		noun: [nLang]string{"Travel", "Reise", "de voyage", "viajes", "di viaggio", "旅行", "旅行"},
		desc: [2][nLang]string{{
			"Searches flights, trains and hotels and books complete trips including seat reservations.",
			"Sucht Flüge, Züge und Hotels und bucht komplette Reisen einschließlich Sitzplatzreservierungen.",
			"Recherche des vols, des trains et des hôtels et réserve des voyages complets, places assises comprises.",
			"Busca vuelos, trenes y hoteles y reserva viajes completos, incluida la reserva de asientos.",
			"Cerca voli, treni e hotel e prenota viaggi completi, compresa la prenotazione dei posti.",
			"航空券、列車、ホテルを検索し、座席指定を含む旅行全体を予約します。",
			"搜索航班、火车和酒店，并预订包括座位在内的完整行程。",
		}, {
			"Keeps travelers informed about delays, gate changes and cancellations.",
			"Informiert Reisende über Verspätungen, Gate-Änderungen und Ausfälle.",
			"Informe les voyageurs des retards, des changements de porte et des annulations.",
			"Mantiene informados a los viajeros sobre retrasos, cambios de puerta y cancelaciones.",
			"Tiene informati i viaggiatori su ritardi, cambi di gate e cancellazioni.",
			"遅延、搭乗口の変更、欠航について旅行者に通知します。",
			"向旅客通知延误、登机口变更和取消信息。",
		}},
		aff: []affordance{
			action("searchFlights", "Searches flight offers between two airports.",
				object("", req("origin", str("IATA code of the departure airport.")),
					req("destination", str("IATA code of the arrival airport.")),
					req("departureDate", day), opt("returnDate", day),
					opt("passengers", integer("Number of passengers.", "1", "9")),
					opt("cabinClass", enum("Cabin class.", "economy", "premium", "business", "first"))),
				array("Matching flight offers.", object("",
					req("flightNumber", str("Flight number.")), req("departure", dateTime),
					req("arrival", dateTime), req("price", amount))),
				true, true),
			action("searchTrains", "Searches train connections between two stations.",
				object("", req("from", str("Departure station.")), req("to", str("Arrival station.")),
					req("date", dateTime), opt("railcard", boolean("Apply a discount card."))),
				array("Connections.", object("",
					req("trainNumber", str("Train number.")), req("departure", dateTime), req("arrival", dateTime),
					opt("changes", integer("Number of changes.", "0", "")))),
				true, true),
			action("bookHotel", "Books a hotel room.",
				object("", req("hotelId", str("Identifier of the hotel.")), req("checkIn", day), req("checkOut", day),
					opt("guests", integer("Number of guests.", "1", "8"))),
				object("", req("bookingReference", str("Booking reference.")),
					req("status", enum("Booking status.", "confirmed", "pending", "waitlisted"))),
				false, false),
			action("cancelBooking", "Cancels a booking and reports the refund.",
				object("", req("bookingReference", str("Booking reference."))),
				object("", req("status", enum("Outcome.", "cancelled", "refused")), opt("refundAmount", amount)),
				false, true),
			action("getTripItinerary", "Returns all segments of a trip in order.",
				object("", req("tripId", str("Identifier of the trip."))),
				object("", req("tripId", str("Identifier of the trip.")),
					req("segments", array("Flights, trains, hotels and cars of the trip.", object("",
						req("type", enum("Kind of segment.", "flight", "train", "hotel", "car")),
						req("start", dateTime), req("end", dateTime))))),
				true, true),
			property("preferredAirlines", "Airlines to prefer when ranking offers.", array("", str("IATA airline code.")), true, false),
			property("loyaltyTier", "Status in the loyalty program.", enum("", "basic", "silver", "gold", "platinum"), false, false),
			property("activeBookings", "Number of upcoming trips.", integer("", "0", ""), false, true),
			event("flightDelayed", "A booked flight is delayed.",
				object("", req("flightNumber", str("Flight number.")), req("delayMinutes", integer("Delay in minutes.", "1", "")),
					opt("newDeparture", dateTime))),
			event("gateChanged", "The departure gate of a booked flight changed.",
				object("", req("flightNumber", str("Flight number.")), req("gate", str("New departure gate.")))),
			event("bookingConfirmed", "A pending booking was confirmed.",
				object("", req("bookingReference", str("Booking reference.")), opt("tripId", str("Identifier of the trip.")))),
		},
		caps: []capability{
			{"flight-search", "Flight Search", "Finds and compares flights.",
				[]string{"find a flight to Lisbon next Monday", "cheapest flight from Munich to Rome"}},
			{"hotel-booking", "Hotel Booking", "Books hotel rooms for a trip.",
				[]string{"book a hotel near the conference center", "I need a room for two nights"}},
			{"disruption-alerts", "Travel Disruption Alerts", "Informs about delays and cancellations.",
				[]string{"is my flight on time?", "tell me if my train is cancelled"}},
		},
	},
	{
		key:  "calendar",
		noun: [nLang]string{"Calendar", "Kalender", "d'agenda", "calendario", "calendario", "カレンダー", "日历"},
		desc: [2][nLang]string{{
			"Schedules meetings, finds free time slots across participants and manages reminders.",
			"Plant Besprechungen, findet freie Zeitfenster aller Teilnehmer und verwaltet Erinnerungen.",
			"Planifie des réunions, trouve des créneaux libres pour tous les participants et gère les rappels.",
			"Programa reuniones, encuentra huecos libres entre los participantes y gestiona recordatorios.",
			"Pianifica riunioni, trova fasce orarie libere tra i partecipanti e gestisce i promemoria.",
			"会議を設定し、参加者全員の空き時間を見つけ、リマインダーを管理します。",
			"安排会议，查找所有参与者的空闲时段并管理提醒。",
		}, {
			"Reads and updates events in shared calendars and resolves scheduling conflicts.",
			"Liest und ändert Termine in gemeinsamen Kalendern und löst Terminkonflikte.",
			"Lit et met à jour les événements des agendas partagés et résout les conflits d'horaire.",
			"Lee y actualiza eventos en calendarios compartidos y resuelve conflictos de agenda.",
			"Legge e aggiorna gli eventi nei calendari condivisi e risolve i conflitti di pianificazione.",
			"共有カレンダーの予定を読み取り・更新し、予定の重複を解消します。",
			"读取和更新共享日历中的事件，并解决日程冲突。",
		}},
		aff: []affordance{
			action("createEvent", "Creates a calendar event and invites the attendees.",
				object("", req("title", str("Subject of the meeting.")), req("start", dateTime), req("end", dateTime),
					opt("attendees", array("Invited people.", email)), opt("location", str("Room or address."))),
				object("", req("eventId", str("Identifier of the event."))),
				false, false),
			action("findFreeSlots", "Finds time slots in which all attendees are free.",
				object("", req("attendees", array("People who must attend.", email)),
					req("durationMinutes", integer("Length of the meeting.", "15", "480")),
					opt("earliest", dateTime), opt("latest", dateTime)),
				array("Free slots, earliest first.", object("", req("start", dateTime), req("end", dateTime))),
				true, true),
			action("listEvents", "Lists the events in a time range.",
				object("", req("from", dateTime), req("to", dateTime)),
				array("Events.", object("", req("eventId", str("Identifier of the event.")),
					req("title", str("Subject.")), req("start", dateTime), req("end", dateTime))),
				true, true),
			action("cancelEvent", "Cancels an event and optionally notifies its attendees.",
				object("", req("eventId", str("Identifier of the event.")), opt("notifyAttendees", boolean("Send a cancellation."))),
				object("", req("cancelled", boolean("Whether the event existed."))),
				false, true),
			action("setReminder", "Sets a reminder before an event.",
				object("", req("eventId", str("Identifier of the event.")),
					req("minutesBefore", integer("Lead time of the reminder.", "0", "10080"))),
				object("", req("reminderId", str("Identifier of the reminder."))),
				false, false),
			property("timeZone", "IANA time zone of the calendar, e.g. Europe/Berlin.", str(""), true, false),
			property("workingHours", "Hours in which meetings may be scheduled.",
				object("", req("start", str("Start of the working day, HH:MM.")), req("end", str("End of the working day, HH:MM."))),
				true, false),
			property("upcomingEvents", "Events in the next 24 hours.", integer("", "0", ""), false, true),
			event("eventReminder", "A reminder for an upcoming event is due.",
				object("", req("eventId", str("Identifier of the event.")), req("title", str("Subject.")), req("start", dateTime))),
			event("invitationReceived", "Someone invited the calendar owner to a meeting.",
				object("", req("eventId", str("Identifier of the event.")), req("organizer", email), opt("title", str("Subject.")))),
			event("scheduleConflict", "Two accepted events overlap.",
				object("", req("eventIds", array("The overlapping events.", str("Identifier of the event."))), opt("detail", str("Explanation.")))),
		},
		caps: []capability{
			{"meeting-scheduling", "Meeting Scheduling", "Books meetings with colleagues and customers.",
				[]string{"set up a meeting with Anna on Tuesday", "schedule a call with the sales team"}},
			{"availability", "Availability", "Finds times when everyone is free.",
				[]string{"when are we all free next week?", "find a one hour slot tomorrow"}},
			{"reminders", "Reminders", "Reminds people of upcoming appointments.",
				[]string{"remind me ten minutes before the meeting", "what is on my calendar today?"}},
		},
	},
	{
		key:  "translation",
		noun: [nLang]string{"Translation", "Übersetzungs", "de traduction", "traducción", "di traduzione", "翻訳", "翻译"},
		desc: [2][nLang]string{{
			"Translates text and documents between more than 100 languages while preserving formatting.",
			"Übersetzt Texte und Dokumente zwischen mehr als 100 Sprachen und erhält dabei die Formatierung.",
			"Traduit des textes et des documents entre plus de 100 langues en conservant la mise en forme.",
			"Traduce textos y documentos entre más de 100 idiomas conservando el formato.",
			"Traduce testi e documenti in oltre 100 lingue mantenendo la formattazione.",
			"書式を保ったまま、100以上の言語間でテキストや文書を翻訳します。",
			"在 100 多种语言之间翻译文本和文档，并保留格式。",
		}, {
			"Detects the source language automatically and keeps a glossary of company terminology.",
			"Erkennt die Ausgangssprache automatisch und pflegt ein Glossar mit Unternehmensterminologie.",
			"Détecte automatiquement la langue source et gère un glossaire de la terminologie de l'entreprise.",
			"Detecta automáticamente el idioma de origen y mantiene un glosario con la terminología de la empresa.",
			"Rileva automaticamente la lingua di origine e gestisce un glossario della terminologia aziendale.",
			"原文の言語を自動検出し、社内用語の用語集を管理します。",
			"自动检测源语言，并维护公司术语表。",
		}},
		aff: []affordance{
			action("translateText", "Translates a text into the target language.",
				object("", req("text", text("Text to translate.")), req("targetLanguage", langTag), opt("sourceLanguage", langTag),
					opt("formality", enum("Register of the translation.", "default", "formal", "informal"))),
				object("", req("translatedText", str("The translation.")), opt("detectedSourceLanguage", langTag)),
				true, true),
			action("detectLanguage", "Detects the language of a text.",
				object("", req("text", text("Text to examine."))),
				object("", req("language", langTag), req("confidence", number("Confidence of the detection.", "0", "1", ""))),
				true, true),
			action("translateDocument", "Starts the translation of a document and returns a job.",
				object("", req("documentUrl", uri), req("targetLanguage", langTag)),
				object("", req("jobId", str("Identifier of the translation job.")),
					req("status", enum("State of the job.", "queued", "running", "done", "failed"))),
				false, false),
			action("addGlossaryEntry", "Adds a term and its fixed translation to the glossary.",
				object("", req("term", str("Source term.")), req("translation", str("Required translation.")), req("language", langTag)),
				object("", req("entryId", str("Identifier of the glossary entry."))),
				false, true),
			property("supportedTranslationLanguages", "Languages that can be translated from and to.", array("", langTag), false, false),
			property("charactersTranslatedToday", "Characters translated since midnight UTC.", integer("", "0", ""), false, true),
			property("defaultFormality", "Register used when a request names none.", enum("", "default", "formal", "informal"), true, false),
			event("documentTranslated", "A document translation job finished.",
				object("", req("jobId", str("Identifier of the translation job.")), req("documentUrl", uri), opt("targetLanguage", langTag))),
			event("glossaryUpdated", "The glossary changed.",
				object("", req("entryId", str("Identifier of the glossary entry.")), opt("term", str("Source term.")))),
		},
		caps: []capability{
			{"text-translation", "Text Translation", "Translates short texts and chat messages.",
				[]string{"translate this into German", "what does Rechnung mean in English?"}},
			{"language-detection", "Language Detection", "Recognizes the language of a text.",
				[]string{"which language is this?", "detect the language of this e-mail"}},
			{"document-translation", "Document Translation", "Translates whole documents and keeps their layout.",
				[]string{"translate this PDF into French", "I need the contract in Spanish"}},
		},
	},
	{
		key:  "search",
		noun: [nLang]string{"Search", "Such", "de recherche", "búsqueda", "di ricerca", "検索", "搜索"},
		desc: [2][nLang]string{{
			"Searches the web, product catalogs and internal knowledge bases and ranks the results by relevance.",
			"Durchsucht das Web, Produktkataloge und interne Wissensdatenbanken und sortiert die Treffer nach Relevanz.",
			"Effectue des recherches sur le web, dans les catalogues de produits et les bases de connaissances internes et classe les résultats par pertinence.",
			"Busca en la web, en catálogos de productos y en bases de conocimiento internas y ordena los resultados por relevancia.",
			"Cerca nel web, nei cataloghi prodotti e nelle basi di conoscenza interne e ordina i risultati per pertinenza.",
			"ウェブ、製品カタログ、社内ナレッジベースを検索し、関連度順に結果を並べます。",
			"搜索网络、产品目录和内部知识库，并按相关性对结果排序。",
		}, {
			"Summarizes the top results and cites the sources it used.",
			"Fasst die wichtigsten Treffer zusammen und nennt die verwendeten Quellen.",
			"Résume les meilleurs résultats et cite les sources utilisées.",
			"Resume los mejores resultados y cita las fuentes utilizadas.",
			"Riassume i risultati migliori e cita le fonti utilizzate.",
			"上位の結果を要約し、使用した情報源を示します。",
			"总结排名靠前的结果并注明所用来源。",
		}},
		aff: []affordance{
			action("webSearch", "Searches the public web.",
				object("", req("query", text("Search terms.")), opt("maxResults", integer("Number of results.", "1", "50")),
					opt("safeSearch", boolean("Filter explicit content."))),
				array("Results, best first.", object("", req("title", str("Page title.")), req("url", uri),
					opt("snippet", str("Excerpt of the page.")), opt("score", number("Relevance.", "0", "1", "")))),
				true, true),
			action("searchKnowledgeBase", "Searches the documents of an internal knowledge base.",
				object("", req("query", text("Search terms.")), opt("collection", str("Collection to search.")),
					opt("maxResults", integer("Number of results.", "1", "50"))),
				array("Matching documents.", object("", req("documentId", str("Identifier of the document.")),
					req("title", str("Document title.")), opt("score", number("Relevance.", "0", "1", "")))),
				true, true),
			action("summarizeResults", "Summarizes the best results of a query and lists the sources.",
				object("", req("query", text("Search terms.")), opt("maxSentences", integer("Length of the summary.", "1", "10"))),
				object("", req("summary", str("The summary.")), req("sources", array("Cited sources.", uri))),
				true, false),
			action("indexDocument", "Adds a document to the search index.",
				object("", req("documentUrl", uri), opt("collection", str("Target collection."))),
				object("", req("documentId", str("Identifier of the indexed document."))),
				false, true),
			property("indexedDocuments", "Number of documents in the index.", integer("", "0", ""), false, true),
			property("defaultMaxResults", "Results returned when a query names no limit.", integer("", "1", "50"), true, false),
			property("collections", "Collections in the knowledge base.", array("", str("Collection name.")), false, false),
			event("indexUpdated", "New documents became searchable.",
				object("", req("collection", str("Collection name.")), req("documentCount", count))),
			event("crawlFailed", "A page could not be fetched for indexing.",
				object("", req("url", uri), opt("reason", str("Error reported by the crawler.")))),
		},
		caps: []capability{
			{"web-search", "Web Search", "Searches the internet for current information.",
				[]string{"search the web for electric bikes", "find recent news about solar panels"}},
			{"knowledge-base", "Knowledge Base Search", "Finds answers in company documents.",
				[]string{"where is the travel expense policy?", "find the onboarding checklist"}},
			{"summarization", "Result Summaries", "Summarizes search results with sources.",
				[]string{"summarize what is known about this topic", "give me the gist with sources"}},
		},
	},
	{
		key:  "math",
		noun: [nLang]string{"Math", "Mathematik", "de calcul", "cálculo", "di calcolo", "数学", "数学"},
		desc: [2][nLang]string{{
			"Evaluates arithmetic and symbolic expressions, solves equations and converts units.",
			"Wertet arithmetische und symbolische Ausdrücke aus, löst Gleichungen und rechnet Einheiten um.",
			"Évalue des expressions arithmétiques et symboliques, résout des équations et convertit des unités.",
			"Evalúa expresiones aritméticas y simbólicas, resuelve ecuaciones y convierte unidades.",
			"Valuta espressioni aritmetiche e simboliche, risolve equazioni e converte unità di misura.",
			"算術式や記号式を評価し、方程式を解き、単位を換算します。",
			"计算算术和符号表达式、求解方程并进行单位换算。",
		}, {
			"Computes statistics such as mean, median and standard deviation for numeric data sets.",
			"Berechnet Kennzahlen wie Mittelwert, Median und Standardabweichung für numerische Datenreihen.",
			"Calcule des statistiques comme la moyenne, la médiane et l'écart type de séries numériques.",
			"Calcula estadísticas como la media, la mediana y la desviación típica de conjuntos de datos numéricos.",
			"Calcola statistiche come media, mediana e deviazione standard di serie di dati numerici.",
			"数値データの平均、中央値、標準偏差などの統計量を計算します。",
			"计算数值数据集的平均值、中位数和标准差等统计量。",
		}},
		aff: []affordance{
			action("evaluateExpression", "Evaluates an arithmetic or symbolic expression.",
				object("", req("expression", text("Expression such as 2*(3+4)^2.")),
					opt("precision", integer("Significant digits of the result.", "1", "64"))),
				object("", req("result", str("Exact or symbolic result.")), opt("numericValue", number("Numeric approximation.", "", "", ""))),
				true, true),
			action("solveEquation", "Solves an equation for one variable.",
				object("", req("equation", text("Equation such as x^2 - 4 = 0.")), req("variable", str("Variable to solve for."))),
				object("", req("solutions", array("All solutions.", str("A solution.")))),
				true, true),
			action("convertUnits", "Converts a quantity from one unit to another.",
				object("", req("value", number("Quantity to convert.", "", "", "")), req("fromUnit", str("Source unit.")),
					req("toUnit", str("Target unit."))),
				object("", req("value", number("Converted quantity.", "", "", "")), req("unit", str("Target unit."))),
				true, true),
			action("computeStatistics", "Computes descriptive statistics of a data set.",
				object("", req("values", array("The data set.", number("A value.", "", "", ""))),
					opt("percentiles", array("Percentiles to report.", integer("A percentile.", "1", "99")))),
				object("", req("mean", number("Arithmetic mean.", "", "", "")), req("median", number("Median.", "", "", "")),
					req("standardDeviation", number("Sample standard deviation.", "0", "", ""))),
				true, true),
			property("maxPrecision", "Largest number of significant digits supported.", integer("", "1", "1024"), false, false),
			property("angleUnit", "Unit of angles in trigonometric functions.", enum("", "degrees", "radians"), true, false),
			event("computationFinished", "A long-running computation finished.",
				object("", req("jobId", str("Identifier of the computation.")), opt("durationMs", integer("Run time in milliseconds.", "0", "")))),
		},
		caps: []capability{
			{"arithmetic", "Calculator", "Evaluates arithmetic expressions exactly.",
				[]string{"what is 17 percent of 2,340?", "calculate 3.5 times 12"}},
			{"equation-solving", "Equation Solving", "Solves linear and polynomial equations.",
				[]string{"solve 2x + 5 = 17", "find the roots of x squared minus 4"}},
			{"unit-conversion", "Unit Conversion", "Converts between metric and imperial units.",
				[]string{"how many miles is 42 kilometers?", "convert 350 Fahrenheit to Celsius"}},
		},
	},
	{
		key:  "support",
		noun: [nLang]string{"Customer Support", "Kundenservice", "de service client", "atención al cliente", "di assistenza clienti", "カスタマーサポート", "客户支持"},
		desc: [2][nLang]string{{
			"Answers customer questions about orders, contracts and devices and opens support tickets when needed.",
			"Beantwortet Kundenfragen zu Bestellungen, Verträgen und Geräten und eröffnet bei Bedarf Support-Tickets.",
			"Répond aux questions des clients sur les commandes, les contrats et les appareils et ouvre des tickets de support si nécessaire.",
			"Responde preguntas de clientes sobre pedidos, contratos y dispositivos y abre tickets de soporte cuando es necesario.",
			"Risponde alle domande dei clienti su ordini, contratti e dispositivi e apre ticket di assistenza quando serve.",
			"注文、契約、端末に関する顧客の質問に答え、必要に応じてサポートチケットを作成します。",
			"回答客户关于订单、合同和设备的问题，并在需要时创建支持工单。",
		}, {
			"Hands the conversation over to a human agent when it cannot resolve the issue.",
			"Übergibt das Gespräch an einen Mitarbeiter, wenn es das Anliegen nicht lösen kann.",
			"Transfère la conversation à un conseiller lorsqu'il ne peut pas résoudre le problème.",
			"Transfiere la conversación a un agente humano cuando no puede resolver el problema.",
			"Passa la conversazione a un operatore quando non riesce a risolvere il problema.",
			"問題を解決できない場合は、会話を担当者に引き継ぎます。",
			"无法解决问题时，将对话转交给人工客服。",
		}},
		aff: []affordance{
			action("createTicket", "Opens a support ticket.",
				object("", req("subject", text("Short summary of the issue.")), req("description", text("What happened.")),
					opt("priority", enum("Urgency.", "low", "normal", "high", "urgent")), opt("customerId", customerID)),
				object("", req("ticketId", ticketID)),
				false, false),
			action("getTicketStatus", "Returns the state of a support ticket.",
				object("", req("ticketId", ticketID)),
				object("", req("ticketId", ticketID),
					req("status", enum("State of the ticket.", "open", "in_progress", "waiting", "resolved", "closed")),
					opt("assignee", str("Person working on the ticket."))),
				true, true),
			action("escalateToHuman", "Queues the conversation for a human agent.",
				object("", req("conversationId", conversation), opt("reason", str("Why a human is needed."))),
				object("", req("queuePosition", integer("Position in the queue.", "0", "")),
					opt("estimatedWaitMinutes", integer("Expected waiting time.", "0", ""))),
				false, false),
			action("searchFaq", "Finds answers in the frequently asked questions.",
				object("", req("question", text("The customer's question.")), opt("product", str("Product the question is about."))),
				array("Matching entries.", object("", req("question", str("FAQ question.")), req("answer", str("FAQ answer.")), opt("url", uri))),
				true, true),
			action("resetPassword", "Sends a password reset link to the customer.",
				object("", req("customerId", customerID), opt("channel", enum("Where the link is sent.", "email", "sms"))),
				object("", req("requested", boolean("Whether the link was sent."))),
				false, false),
			property("openTickets", "Number of unresolved tickets.", integer("", "0", ""), false, true),
			property("averageResponseTime", "Mean time to first response over the last day.", number("", "0", "", "minutes"), false, false),
			property("businessHours", "When human agents are available, e.g. Mo-Fr 08:00-20:00.", str(""), true, false),
			event("ticketCreated", "A support ticket was opened.",
				object("", req("ticketId", ticketID), opt("priority", enum("Urgency.", "low", "normal", "high", "urgent")))),
			event("ticketResolved", "A support ticket was resolved.",
				object("", req("ticketId", ticketID), opt("resolution", str("How the issue was solved.")))),
			event("satisfactionSurveyCompleted", "A customer rated the support they received.",
				object("", req("ticketId", ticketID), req("score", integer("Rating from 1 to 5.", "1", "5")))),
		},
		caps: []capability{
			{"ticketing", "Support Tickets", "Opens and tracks support tickets.",
				[]string{"my router is broken, please open a ticket", "what is the status of my complaint?"}},
			{"faq", "Frequently Asked Questions", "Answers common questions about products and contracts.",
				[]string{"how do I cancel my contract?", "how can I reset my password?"}},
			{"handover", "Human Handover", "Transfers the customer to a human agent.",
				[]string{"I want to talk to a person", "connect me to an agent"}},
		},
	},
	{
		key:  "energy",
		noun: [nLang]string{"Energy", "Energie", "énergétique", "energía", "energetico", "エネルギー", "能源"},
		desc: [2][nLang]string{{
			"Monitors electricity consumption, solar production and battery storage of a household or site.",
			"Überwacht Stromverbrauch, Solarerzeugung und Batteriespeicher eines Haushalts oder Standorts.",
			"Surveille la consommation d'électricité, la production solaire et le stockage par batterie d'un foyer ou d'un site.",
			"Supervisa el consumo eléctrico, la producción solar y el almacenamiento en baterías de un hogar o instalación.",
			"Monitora il consumo di elettricità, la produzione solare e l'accumulo in batteria di un'abitazione o di un sito.",
			"家庭や拠点の電力消費量、太陽光発電量、蓄電池の状態を監視します。",
			"监测家庭或站点的用电量、光伏发电量和电池储能。",
		}, {
			"Optimizes charging of electric vehicles according to dynamic tariffs and grid load.",
			"Optimiert das Laden von Elektrofahrzeugen anhand dynamischer Tarife und der Netzlast.",
			"Optimise la recharge des véhicules électriques selon les tarifs dynamiques et la charge du réseau.",
			"Optimiza la carga de vehículos eléctricos según las tarifas dinámicas y la carga de la red.",
			"Ottimizza la ricarica dei veicoli elettrici in base alle tariffe dinamiche e al carico della rete.",
			"変動料金と電力網の負荷に応じて電気自動車の充電を最適化します。",
			"根据动态电价和电网负荷优化电动汽车充电。",
		}},
		aff: []affordance{
			action("getConsumption", "Returns metered consumption in a time range.",
				object("", req("meterId", str("Identifier of the meter.")), req("from", dateTime), req("to", dateTime),
					opt("resolution", enum("Interval length.", "15min", "hour", "day"))),
				array("Readings.", object("", req("timestamp", dateTime), req("energy", number("Energy in the interval.", "0", "", "kWh")))),
				true, true),
			action("scheduleCharging", "Plans the cheapest charging of an electric vehicle before departure.",
				object("", req("vehicleId", str("Identifier of the vehicle.")),
					req("targetStateOfCharge", integer("Battery level to reach in percent.", "10", "100")),
					req("departureTime", dateTime)),
				object("", req("scheduleId", str("Identifier of the plan.")), opt("estimatedCost", amount)),
				false, false),
			action("getTariff", "Returns the hourly prices of the dynamic tariff.",
				object("", opt("date", day)),
				array("Hourly prices.", object("", req("hour", integer("Hour of the day.", "0", "23")),
					req("price", number("Price per kWh.", "", "", "EUR/kWh")))),
				true, true),
			action("setBatteryMode", "Switches the operating mode of the home battery.",
				object("", req("mode", enum("Operating mode.", "self-consumption", "backup", "grid-support"))),
				object("", req("mode", enum("Mode now active.", "self-consumption", "backup", "grid-support"))),
				false, true),
			property("currentPower", "Current grid import (positive) or export (negative).", number("", "-50000", "50000", "W"), false, true),
			property("batteryStateOfCharge", "Charge level of the home battery.", integer("", "0", "100"), false, true),
			property("solarProduction", "Current output of the photovoltaic system.", number("", "0", "", "W"), false, true),
			property("peakLimit", "Import power above which loads are shed.", number("", "0", "", "W"), true, false),
			event("peakLoadWarning", "Grid import is close to the peak limit.",
				object("", req("currentPower", number("Current import.", "", "", "W")), req("limit", number("Configured limit.", "0", "", "W")))),
			event("chargingCompleted", "An electric vehicle finished charging.",
				object("", req("vehicleId", str("Identifier of the vehicle.")), opt("energyCharged", number("Energy delivered.", "0", "", "kWh")))),
			event("gridOutage", "The public grid failed and the site runs on battery.",
				object("", req("startedAt", dateTime), opt("area", str("Affected grid area.")))),
		},
		caps: []capability{
			{"consumption-monitoring", "Consumption Monitoring", "Shows electricity use and solar yield.",
				[]string{"how much power did we use yesterday?", "how much did the solar panels produce?"}},
			{"ev-charging", "EV Charging", "Charges electric cars when power is cheap.",
				[]string{"charge my car to 80 percent by 7 am", "when is the cheapest time to charge?"}},
			{"tariff-optimization", "Tariff Optimization", "Shifts loads to cheap hours of a dynamic tariff.",
				[]string{"what does electricity cost tonight?", "run the dishwasher when power is cheap"}},
		},
	},
	{
		key:  "logistics",
		noun: [nLang]string{"Logistics", "Logistik", "logistique", "logística", "logistico", "物流", "物流"},
		desc: [2][nLang]string{{
			"Tracks parcels and freight shipments, estimates delivery times and checks inventory availability.",
			"Verfolgt Pakete und Frachtsendungen, schätzt Lieferzeiten und prüft die Lagerverfügbarkeit.",
			"Suit les colis et les envois de fret, estime les délais de livraison et vérifie la disponibilité des stocks.",
			"Rastrea paquetes y envíos de carga, estima los plazos de entrega y comprueba la disponibilidad de inventario.",
			"Traccia pacchi e spedizioni merci, stima i tempi di consegna e verifica la disponibilità di magazzino.",
			"小包や貨物の配送状況を追跡し、配達時間を予測し、在庫の有無を確認します。",
			"跟踪包裹和货运，预估送达时间并检查库存情况。",
		}, {
			"Books pickups, prints shipping labels and reroutes deliveries when an address changes.",
			"Bucht Abholungen, druckt Versandetiketten und leitet Zustellungen um, wenn sich eine Adresse ändert.",
			"Réserve des enlèvements, imprime des étiquettes d'expédition et réachemine les livraisons en cas de changement d'adresse.",
			"Reserva recogidas, imprime etiquetas de envío y redirige entregas cuando cambia una dirección.",
			"Prenota ritiri, stampa etichette di spedizione e reindirizza le consegne quando cambia un indirizzo.",
			"集荷を予約し、配送ラベルを印刷し、住所が変わった場合は配達先を変更します。",
			"预约取件、打印运单标签，并在地址变更时改派。",
		}},
		aff: []affordance{
			action("trackShipment", "Returns the current status and location of a shipment.",
				object("", req("trackingNumber", trackingNo)),
				object("", req("status", enum("Shipment status.", "label_created", "in_transit", "out_for_delivery", "delivered", "exception")),
					opt("location", str("Last scan location.")), opt("estimatedDelivery", dateTime)),
				true, true),
			action("createShipment", "Creates a shipment and its shipping label.",
				object("", req("sender", address), req("recipient", address),
					req("weightKg", number("Gross weight.", "0.1", "31.5", "kg"))),
				object("", req("trackingNumber", trackingNo), req("labelUrl", uri)),
				false, false),
			action("checkInventory", "Reports stock of an article in a warehouse.",
				object("", req("sku", str("Stock keeping unit.")), opt("warehouse", str("Warehouse code."))),
				object("", req("available", count), opt("reserved", count)),
				true, true),
			action("schedulePickup", "Books a courier pickup.",
				object("", req("address", address), req("date", day), opt("parcels", integer("Number of parcels.", "1", "50"))),
				object("", req("pickupId", str("Identifier of the pickup.")), opt("window", str("Time window, e.g. 10:00-14:00."))),
				false, false),
			action("rerouteDelivery", "Sends a shipment in transit to a new address.",
				object("", req("trackingNumber", trackingNo), req("newAddress", address)),
				object("", req("accepted", boolean("Whether the carrier accepted the change."))),
				false, true),
			property("shipmentsInTransit", "Shipments not yet delivered.", integer("", "0", ""), false, true),
			property("defaultServiceLevel", "Service level used when a shipment names none.", enum("", "standard", "express", "freight", "same-day"), true, false),
			property("warehouses", "Codes of the connected warehouses.", array("", str("Warehouse code.")), false, false),
			event("shipmentDelivered", "A shipment was delivered.",
				object("", req("trackingNumber", trackingNo), req("deliveredAt", dateTime), opt("signedBy", str("Name of the recipient.")))),
			event("deliveryException", "A delivery failed.",
				object("", req("trackingNumber", trackingNo),
					req("reason", enum("Cause.", "address_not_found", "recipient_absent", "damaged", "customs_hold")))),
			event("stockLow", "Stock of an article fell below its reorder point.",
				object("", req("sku", str("Stock keeping unit.")), req("available", count))),
		},
		caps: []capability{
			{"shipment-tracking", "Shipment Tracking", "Tells where a parcel is and when it arrives.",
				[]string{"where is my parcel?", "when will my package arrive?"}},
			{"inventory", "Inventory Check", "Checks stock levels in warehouses.",
				[]string{"is this item in stock?", "how many units are left in Leipzig?"}},
			{"pickup", "Pickup Booking", "Orders a courier to collect parcels.",
				[]string{"pick up three parcels tomorrow morning", "book a courier for Friday"}},
		},
	},
	{
		key:  "health",
		noun: [nLang]string{"Health", "Gesundheits", "de santé", "salud", "sanitario", "ヘルスケア", "健康"},
		desc: [2][nLang]string{{
			"Helps patients book appointments, refill prescriptions and understand laboratory results.",
			"Hilft Patienten, Termine zu buchen, Rezepte zu verlängern und Laborwerte zu verstehen.",
			"Aide les patients à prendre rendez-vous, à renouveler leurs ordonnances et à comprendre leurs résultats d'analyses.",
			"Ayuda a los pacientes a pedir citas, renovar recetas y entender los resultados de laboratorio.",
			"Aiuta i pazienti a prenotare visite, rinnovare le prescrizioni e capire i risultati di laboratorio.",
			"患者の診療予約、処方箋の再発行、検査結果の理解を支援します。",
			"帮助患者预约就诊、续开处方并理解化验结果。",
		}, {
			"Collects symptoms before a visit and reminds patients to take their medication.",
			"Erfasst Symptome vor einem Arztbesuch und erinnert an die Einnahme von Medikamenten.",
			"Recueille les symptômes avant une consultation et rappelle aux patients de prendre leurs médicaments.",
			"Recoge los síntomas antes de una consulta y recuerda a los pacientes que tomen su medicación.",
			"Raccoglie i sintomi prima di una visita e ricorda ai pazienti di assumere i farmaci.",
			"受診前に症状を聞き取り、服薬のリマインダーを送ります。",
			"在就诊前收集症状，并提醒患者按时服药。",
		}},
		aff: []affordance{
			action("bookAppointment", "Books an appointment with a practitioner.",
				object("", req("patientId", str("Identifier of the patient.")),
					req("specialty", enum("Medical specialty.", "general", "cardiology", "dermatology", "pediatrics", "orthopedics")),
					req("preferredDate", day), opt("reason", str("Reason for the visit."))),
				object("", req("appointmentId", str("Identifier of the appointment.")), req("start", dateTime),
					opt("practitioner", str("Name of the practitioner."))),
				false, false),
			action("requestPrescriptionRefill", "Asks the practice to renew a prescription.",
				object("", req("patientId", str("Identifier of the patient.")), req("medication", str("Name of the medication.")),
					opt("pharmacy", str("Pharmacy to send it to."))),
				object("", req("requestId", str("Identifier of the request.")),
					req("status", enum("State of the request.", "submitted", "approved", "rejected"))),
				false, false),
			action("explainLabResult", "Explains a laboratory value and its reference range.",
				object("", req("testCode", str("LOINC code of the test.")), req("value", number("Measured value.", "", "", "")),
					req("unit", str("Unit of the value."))),
				object("", req("interpretation", str("Explanation in plain language.")),
					opt("referenceRange", str("Normal range.")), opt("flag", enum("Where the value lies.", "low", "normal", "high"))),
				true, true),
			action("checkSymptoms", "Assesses symptoms and recommends the level of care.",
				object("", req("symptoms", array("Reported symptoms.", str("A symptom."))),
					opt("age", integer("Age in years.", "0", "120")), opt("durationDays", integer("Days since onset.", "0", "365"))),
				object("", req("urgency", enum("Recommended care.", "self-care", "primary-care", "urgent", "emergency")),
					opt("advice", str("Advice for the patient."))),
				true, true),
			property("nextAppointment", "Start of the patient's next appointment.", dateTime, false, true),
			property("reminderTimes", "Times of day for medication reminders, HH:MM.", array("", str("Time of day.")), true, false),
			property("practiceOpeningHours", "Opening hours of the practice.", str(""), false, false),
			event("appointmentReminder", "An appointment is coming up.",
				object("", req("appointmentId", str("Identifier of the appointment.")), req("start", dateTime))),
			event("labResultAvailable", "New laboratory results are available.",
				object("", req("patientId", str("Identifier of the patient.")), req("testCode", str("LOINC code of the test.")))),
			event("medicationReminder", "It is time to take a medication.",
				object("", req("medication", str("Name of the medication.")), opt("dose", str("Dose to take.")))),
		},
		caps: []capability{
			{"appointments", "Appointment Booking", "Books and reschedules doctor appointments.",
				[]string{"I need to see a dermatologist", "move my appointment to next week"}},
			{"prescriptions", "Prescription Refills", "Renews regular prescriptions.",
				[]string{"I am running out of my blood pressure pills", "renew my prescription"}},
			{"lab-results", "Lab Results", "Explains laboratory values in plain language.",
				[]string{"what does my cholesterol value mean?", "is my vitamin D level normal?"}},
		},
	},
	{
		key:  "shopping",
		noun: [nLang]string{"Shopping", "Einkaufs", "d'achat", "compras", "per lo shopping", "ショッピング", "购物"},
		desc: [2][nLang]string{{
			"Finds products, compares prices across shops and manages the shopping cart and checkout.",
			"Findet Produkte, vergleicht Preise verschiedener Shops und verwaltet Warenkorb und Bestellabschluss.",
			"Trouve des produits, compare les prix entre boutiques et gère le panier et le paiement.",
			"Encuentra productos, compara precios entre tiendas y gestiona el carrito y el pago.",
			"Trova prodotti, confronta i prezzi tra negozi e gestisce carrello e pagamento.",
			"商品を探し、ショップ間で価格を比較し、カートと決済を管理します。",
			"查找商品、比较各商店价格并管理购物车和结账。",
		}, {
			"Tracks orders and handles returns, refunds and product recommendations.",
			"Verfolgt Bestellungen und kümmert sich um Rücksendungen, Erstattungen und Produktempfehlungen.",
			"Suit les commandes et gère les retours, les remboursements et les recommandations de produits.",
			"Sigue los pedidos y gestiona devoluciones, reembolsos y recomendaciones de productos.",
			"Segue gli ordini e gestisce resi, rimborsi e consigli sui prodotti.",
			"注文を追跡し、返品、返金、おすすめ商品に対応します。",
			"跟踪订单并处理退货、退款和商品推荐。",
		}},
		aff: []affordance{
			action("searchProducts", "Searches the product catalog.",
				object("", req("query", text("Search terms.")), opt("category", str("Product category.")),
					opt("maxPrice", amount), opt("sort", enum("Order of the results.", "relevance", "price_asc", "price_desc", "rating"))),
				array("Products.", object("", req("productId", str("Identifier of the product.")), req("name", str("Product name.")),
					req("price", amount), opt("rating", number("Average rating.", "0", "5", "")))),
				true, true),
			action("addToCart", "Adds a product to the shopping cart.",
				object("", req("productId", str("Identifier of the product.")), req("quantity", integer("Number of units.", "1", "99"))),
				object("", req("cartId", str("Identifier of the cart.")), req("itemCount", count)),
				false, false),
			action("checkout", "Places the order for the contents of a cart.",
				object("", req("cartId", str("Identifier of the cart.")),
					req("paymentMethod", enum("Payment method.", "card", "wallet", "invoice", "sepa")),
					opt("couponCode", str("Discount code."))),
				object("", req("orderId", str("Identifier of the order.")), req("total", amount)),
				false, false),
			action("requestReturn", "Starts the return of items of an order.",
				object("", req("orderId", str("Identifier of the order.")), req("items", array("Products to return.", str("Identifier of the product."))),
					req("reason", enum("Why the items go back.", "damaged", "wrong_item", "not_as_described", "changed_mind"))),
				object("", req("returnId", str("Identifier of the return.")), opt("labelUrl", uri)),
				false, false),
			action("recommendProducts", "Recommends products for a customer.",
				object("", opt("customerId", customerID), opt("basedOnProductId", str("Product to find similar ones for.")),
					opt("limit", integer("Number of recommendations.", "1", "20"))),
				array("Recommendations.", object("", req("productId", str("Identifier of the product.")),
					req("name", str("Product name.")), opt("reason", str("Why it is recommended.")))),
				true, false),
			property("cartItemCount", "Items in the current cart.", integer("", "0", ""), false, true),
			property("preferredCurrency", "Currency prices are shown in.", enum("", "EUR", "USD", "GBP", "CHF", "JPY"), true, false),
			property("wishlist", "Products the customer saved for later.", array("", str("Identifier of the product.")), true, false),
			event("orderShipped", "An order left the warehouse.",
				object("", req("orderId", str("Identifier of the order.")), opt("trackingNumber", trackingNo))),
			event("priceDropped", "A product on the wishlist got cheaper.",
				object("", req("productId", str("Identifier of the product.")), req("oldPrice", amount), req("newPrice", amount))),
			event("refundIssued", "Money was refunded for a return.",
				object("", req("orderId", str("Identifier of the order.")), req("amount", amount))),
		},
		caps: []capability{
			{"product-search", "Product Search", "Finds products and compares prices.",
				[]string{"find running shoes under 100 euros", "compare prices for this coffee machine"}},
			{"checkout", "Checkout", "Orders the items in the cart.",
				[]string{"buy the items in my cart", "pay with my saved card"}},
			{"returns", "Returns and Refunds", "Handles returns and refunds of orders.",
				[]string{"I want to return these shoes", "where is my refund?"}},
		},
	},
}
